import { type FunctionTool, ModelBehaviorError, type RunContext, tool } from '@openai/agents';
import {
  convertedRuntime,
  type GovernedToolRuntime,
  runConvertedCall,
} from '../adapters/governed-call.js';
import type { AnyGovernedTool } from '../tools/types.js';

/** What `toOpenAIAgentsTool` needs beyond the runtime: where a call's thread id comes from. */
export interface OpenAIAgentsToolOptions<Context> extends GovernedToolRuntime {
  /**
   * The audit thread of a call (default: `context.threadId` of the run context when it is a
   * string, else `openai-agents:default`). Calls of one thread share audit chain and
   * idempotency scope.
   */
  threadIdFor?: (runContext: RunContext<Context>) => string;
}

/**
 * An `@openai/agents` function tool that runs a governed tool through the same pipeline as
 * `toLangChainTool` (`runConvertedCall`: pins, validation, sandbox, sanitiser, idempotency,
 * audit). The model sees the tool's JSON Schema (non-strict, so optional fields stay
 * optional); its raw arguments reach the governed validation untouched. A tool-level failure
 * answers the model with `Error [code]: message`; infrastructure failures and cancellations
 * are thrown (the SDK's default of turning every error into text is switched off), so a run
 * fails instead of carrying on with a wrong answer.
 *
 * @example
 * const agent = new Agent({ name: 'ops', tools: [toOpenAIAgentsTool(getBalance, { audit })] });
 */
export function toOpenAIAgentsTool<Context = unknown>(
  governed: AnyGovernedTool,
  options: OpenAIAgentsToolOptions<Context> = {},
): FunctionTool<Context> {
  const { threadIdFor, ...governance } = options;
  const runtime = convertedRuntime(governed, governance, 'toOpenAIAgentsTool');
  return tool({
    name: governed.name,
    description: governed.description,
    parameters: structuredClone(governed.jsonSchema.input) as never,
    strict: false,
    async execute(input: unknown, runContext?: RunContext<Context>, details?) {
      const result = await runConvertedCall(governed, runtime, input, {
        threadId: runContext ? threadIdOf(runContext, threadIdFor) : 'openai-agents:default',
        ...(details?.toolCall?.callId ? { toolCallId: details.toolCall.callId } : {}),
        ...(details?.signal ? { signal: details.signal } : {}),
        metadata: {},
      });
      return result.status === 'success'
        ? result.content
        : `Error [${result.code}]: ${result.message}`;
    },
    // Only arguments the model could not even write as JSON become a message for it.
    errorFunction: (_runContext, error) => {
      if (error instanceof ModelBehaviorError) {
        return `Error [input_invalid]: the arguments of "${governed.name}" are not valid JSON; call the tool again with a JSON object.`;
      }
      throw error;
    },
  }) as unknown as FunctionTool<Context>;
}

function threadIdOf<Context>(
  runContext: RunContext<Context>,
  threadIdFor: ((runContext: RunContext<Context>) => string) | undefined,
): string {
  if (threadIdFor) return threadIdFor(runContext);
  const threadId = (runContext.context as { threadId?: unknown } | undefined)?.threadId;
  return typeof threadId === 'string' && threadId !== '' ? threadId : 'openai-agents:default';
}
