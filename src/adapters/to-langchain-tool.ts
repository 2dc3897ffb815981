import { CallbackManager, parseCallbackConfigArg } from '@langchain/core/callbacks/manager';
import { ToolMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import { StructuredTool } from '@langchain/core/tools';
import type { z } from 'zod';
import { VeridexError } from '../errors/index.js';
import { scopeMetadata } from '../governance/governance-runtime.js';
import type { GovernanceRuntime } from '../governance/index.js';
import type { AnyGovernedTool } from '../tools/types.js';
import { convertedRuntime, type GovernedToolRuntime, runConvertedCall } from './governed-call.js';

export type { GovernedToolRuntime } from './governed-call.js';

interface ToolCallLike {
  id?: string;
  name: string;
  args: Record<string, unknown>;
  type?: 'tool_call';
}

/**
 * A LangChain `StructuredTool` that runs a governed tool through the full governance pipeline
 * (`runTool`: pins, validation, policy, approvals, sandbox, sanitiser, at most once, audit)
 * wherever LangChain tools go: `ToolNode`, `createReactAgent`, `model.bindTools`. A call that
 * needs approval suspends the graph with `interrupt()` where LangGraph can (a graph with a
 * checkpointer; resume with signed decisions as for the governed tool node), and is refused
 * with `approval_required` elsewhere. Invoked with a tool call it returns a `ToolMessage`
 * (`status: 'error'` with a model-safe message on tool-level failures); invoked with plain
 * arguments it returns the content string and throws a `VeridexError` on failure. LangGraph
 * interrupts and infrastructure failures propagate.
 *
 * The thread id comes from `configurable.thread_id`, the tool call id from the tool call;
 * scalar `configurable` entries become `context.metadata`.
 */
export class GovernedStructuredTool extends StructuredTool {
  readonly governed: AnyGovernedTool;
  /** The governance this tool's calls run under (defaults resolved). */
  readonly runtime: GovernanceRuntime;
  name: string;
  description: string;
  schema: z.ZodType;

  constructor(governed: AnyGovernedTool, runtime: GovernedToolRuntime = {}) {
    super({
      metadata: { veridex: { schemaHash: governed.schemaHash, safetyClass: governed.safetyClass } },
    });
    this.governed = governed;
    this.runtime = convertedRuntime(governed, runtime, 'toLangChainTool');
    this.name = governed.name;
    this.description = governed.description;
    this.schema = governed.input;
  }

  // LangChain's own call() parses the arguments first and would reject invalid ones before
  // the governed pipeline sees (and audits) them; this keeps LangChain's callbacks and hands
  // the raw arguments to runTool instead.
  override async call(
    arg: unknown,
    configArg?: RunnableConfig & { toolCall?: ToolCallLike },
  ): Promise<never> {
    const config = parseCallbackConfigArg(configArg) as RunnableConfig & {
      toolCall?: ToolCallLike;
    };
    const toolCall = isToolCall(arg) ? arg : config.toolCall;
    const args = isToolCall(arg) ? arg.args : arg;
    const configurable = (config.configurable ?? {}) as Record<string, unknown>;
    const manager = CallbackManager.configure(
      config.callbacks,
      this.callbacks,
      config.tags,
      this.tags,
      config.metadata,
      this.metadata,
      { verbose: this.verbose },
    );
    const run = await manager?.handleToolStart(
      this.toJSON(),
      JSON.stringify(args ?? {}),
      config.runId,
      undefined,
      undefined,
      undefined,
      config.runName,
      toolCall?.id,
    );
    let output: ToolMessage | string;
    try {
      const threadId =
        typeof configurable.thread_id === 'string' ? configurable.thread_id : 'default';
      const result = await runConvertedCall(this.governed, this.runtime, args, {
        threadId,
        ...(toolCall?.id ? { toolCallId: toolCall.id } : {}),
        ...(typeof configurable.run_id === 'string' ? { runId: configurable.run_id } : {}),
        ...(config.signal ? { signal: config.signal } : {}),
        metadata: scopeMetadata(configurable),
      });
      if (!toolCall?.id) {
        if (result.status === 'error')
          throw new VeridexError(result.code, result.message, { details: result.details });
        output = result.content;
      } else {
        output = new ToolMessage({
          tool_call_id: toolCall.id,
          name: this.name,
          status: result.status,
          content: result.status === 'success' ? result.content : result.message,
          ...(result.status === 'success' && result.artifact !== undefined
            ? { artifact: result.artifact }
            : {}),
        });
      }
    } catch (error) {
      await run?.handleToolError(error);
      throw error;
    }
    await run?.handleToolEnd(output);
    return output as never;
  }

  protected async _call(): Promise<never> {
    throw new Error('GovernedStructuredTool runs through call(); _call is never used.');
  }
}

/**
 * Converts a governed tool into a LangChain tool that still enforces its contract.
 * @example const agent = createReactAgent({ llm, tools: [toLangChainTool(getWeather, { audit, registry })] });
 */
export function toLangChainTool(
  governed: AnyGovernedTool,
  runtime: GovernedToolRuntime = {},
): GovernedStructuredTool {
  return new GovernedStructuredTool(governed, runtime);
}

function isToolCall(value: unknown): value is ToolCallLike {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as ToolCallLike).type === 'tool_call' &&
    'args' in value
  );
}
