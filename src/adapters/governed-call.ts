import {
  type GovernanceOptions,
  type GovernanceRuntime,
  resolveRuntime,
  runTool,
} from '../governance/index.js';
import { requireGovernedTools } from '../governance/safety-class-config.js';
import type { ToolRunResult } from '../tools/execute-tool-types.js';
import type { AnyGovernedTool } from '../tools/types.js';

/**
 * What a converted tool runs under: the same governance as the governed tool node (policy,
 * approvals, audit, at-most-once ledger, sandbox, secrets), every field with a secure default.
 */
export type GovernedToolRuntime = GovernanceOptions;

/** The identity of one call arriving through a converter (LangChain, OpenAI Agents SDK). */
export interface ConvertedCall {
  threadId: string;
  toolCallId?: string;
  runId?: string;
  signal?: AbortSignal;
  metadata: Readonly<Record<string, unknown>>;
}

/** Resolves a converter's runtime once, so every call of the converted tool shares it. */
export function convertedRuntime(
  governed: AnyGovernedTool,
  runtime: GovernedToolRuntime,
  where: string,
): GovernanceRuntime {
  // Only governed tools: a plain tool, or a safetyClasses map from shared options, would
  // otherwise be run or ignored with no class anybody chose (README "Fail closed").
  requireGovernedTools([governed], runtime, where);
  return resolveRuntime(runtime, [governed]);
}

/**
 * The one way a converted tool executes a governed tool: `toLangChainTool` and
 * `toOpenAIAgentsTool` both call it, so the whole governed pipeline (`runTool`: pins,
 * validation, policy, approvals, sandbox, sanitiser, at most once, audit) holds for every
 * framework the tool is handed to. Never copy its body into a converter.
 */
export function runConvertedCall(
  governed: AnyGovernedTool,
  runtime: GovernanceRuntime,
  args: unknown,
  call: ConvertedCall,
): Promise<ToolRunResult> {
  return runTool(governed, args, {
    runtime,
    threadId: call.threadId,
    ...(call.toolCallId ? { toolCallId: call.toolCallId } : {}),
    ...(call.runId ? { runId: call.runId } : {}),
    ...(call.signal ? { signal: call.signal } : {}),
    metadata: call.metadata,
  });
}
