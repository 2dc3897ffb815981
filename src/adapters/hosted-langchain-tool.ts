import type { ToolCall } from '@langchain/core/messages';
import type { StructuredToolInterface } from '@langchain/core/tools';
import { z } from 'zod';
import { VeridexError } from '../errors/index.js';
import { createGovernedTool } from '../tools/tool.js';
import type { GovernedTool, SafetyClass, ToolRuntime } from '../tools/types.js';
import { importedLangChainFields } from './from-langchain-tool.js';
import { encodeHostResult } from './host-result.js';

/**
 * Key of the runtime field through which a host runs a hosted LangChain tool its own way
 * (createAgent's `wrapToolCall` handler, so the middleware after ours still runs). Without
 * it the tool is invoked as LangGraph's `ToolNode` invokes it.
 */
export const HOST_INVOKE: unique symbol = Symbol.for('veridex.hostInvoke');

/** A runtime whose host may run the tool itself. */
export type HostedRuntime = ToolRuntime & {
  [HOST_INVOKE]?: (call: ToolCall, signal: AbortSignal) => Promise<unknown>;
};

/** Options for {@link hostLangChainTool}. */
export interface HostLangChainToolOptions {
  /** How dangerous the tool is (annotations may raise it, never lower it). */
  safetyClass: SafetyClass;
}

/**
 * A LangChain tool governed where it is hosted — the governed tool node, the createAgent
 * middleware: imported like {@link fromLangChainTool} (normalised name, sanitised description,
 * closed input schema, `trust: 'imported'`), but executed as its host would execute it: with
 * the LangGraph runtime (`state`, `toolCallId`, `config`, store, writer) as its second
 * argument, and its result kept whole — a `ToolMessage` with its status, artifact and metadata,
 * or a `Command` (state update, `goto`, parent-graph handoff). The result is stored in the
 * at-most-once ledger in a JSON form and rebuilt by {@link decodeHostResult}.
 *
 * @throws VeridexError `import_invalid`, `tool_definition_invalid`, `config_invalid`.
 */
export function hostLangChainTool(
  lcTool: StructuredToolInterface,
  options: HostLangChainToolOptions,
): GovernedTool<z.ZodType, z.ZodString> {
  const fields = importedLangChainFields(lcTool, { safetyClass: options.safetyClass });
  // Policy rules, `safetyClasses` and `review` name a hosted tool by the name its host binds;
  // proposals carry the governed name. Were they to differ (`crm.refund` → `crm_refund`), a rule
  // naming the tool would never match its calls: such a name is refused, not rewritten.
  if (fields.name !== lcTool.name) {
    throw new VeridexError(
      'config_invalid',
      `The LangChain tool ${JSON.stringify(String(lcTool.name)).slice(0, 80)} has a name that is not a plain tool name (letters, digits, "_" and "-", not starting or ending with "_", at most 64 characters); rename it, e.g. to ${JSON.stringify(fields.name)}, so that policy rules, safetyClasses and review entries naming it match its calls.`,
    );
  }
  return createGovernedTool(
    {
      ...fields,
      output: z.string(),
      async execute({ input, signal, context, runtime }) {
        const call: ToolCall = {
          id: context.toolCallId,
          name: lcTool.name,
          args: input as Record<string, unknown>,
          type: 'tool_call',
        };
        const host = (runtime as HostedRuntime | undefined)?.[HOST_INVOKE];
        const raw = host
          ? await host(call, signal)
          : await lcTool.invoke(call, invocationConfig(runtime, signal) as never);
        return encodeHostResult(raw);
      },
    },
    'imported',
  );
}

/** What LangGraph's ToolNode passes as a tool's second argument, with the attempt's signal. */
function invocationConfig(
  runtime: ToolRuntime | undefined,
  signal: AbortSignal,
): Record<string, unknown> {
  if (!runtime) return { signal };
  return { ...runtime.config, ...runtime, signal };
}
