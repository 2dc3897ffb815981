import { randomUUID } from 'node:crypto';
import type { ToolCall } from '@langchain/core/messages';
import { contentHash } from '../audit/index.js';
import type { AnyGovernedTool, ToolRunResult } from '../tools/index.js';
import { toArguments } from '../tools/tool-call-io.js';
import { canSuspend } from './can-suspend.js';
import { decideCalls, executePlan, failureOf } from './decide-calls.js';
import type { CallScope, GovernanceRuntime } from './governance-runtime.js';
import { type GovernanceOptions, resolveRuntime } from './resolve-runtime.js';
import { requireGovernedTools } from './safety-class-config.js';

/** Options of {@link runTool}: the call's identity, and the governance it runs under. */
export interface RunToolOptions extends GovernanceOptions {
  /** Default `default`. */
  threadId?: string;
  /**
   * Names the call: the same id is the same approval request and runs at most once. Default:
   * for tools with `idempotency: 'required'`, derived from the tool and arguments (the same
   * arguments are the same call); otherwise a fresh id per call — to retry a call that needed
   * approval, pass back the `details.toolCallId` of its `approval_required` result.
   */
  toolCallId?: string;
  /** Default: the thread id. */
  runId?: string;
  /** Turn of the audit events (default 0). */
  turnIndex?: number;
  metadata?: Readonly<Record<string, unknown>>;
  /** Cancels the call; `runTool` then throws the signal's reason. */
  signal?: AbortSignal;
  /**
   * `auto` (default): inside a LangGraph graph with a checkpointer, a call that needs approval
   * suspends the thread with `interrupt()`; anywhere else it is refused with
   * `approval_required`. `never`: always refuse.
   */
  suspend?: 'auto' | 'never';
  /** A runtime already resolved (e.g. shared by many calls); wins over the fields above. */
  runtime?: GovernanceRuntime;
}

/**
 * Runs one governed tool call through the whole pipeline — the same as the governed tool
 * node: pin check, argument validation, policy (the safety-class defaults unless you pass a
 * `PolicyEngine`), approvals, then at most once in the sandbox with the sanitiser and audit
 * events. A call that needs approval is never executed here without one: it suspends the
 * graph where it can (see `suspend`), otherwise it returns `approval_required` with the
 * request's id in `details.approvalId` and the call's in `details.toolCallId` — decide the
 * request, then call again with the same arguments and that `toolCallId`.
 *
 * Tool-level failures come back as `{ status: 'error', code, message }` with a model-safe
 * message; it throws only LangGraph interrupts, the caller's abort reason, infrastructure
 * failures (`db_unavailable`) and `idempotency_busy` (the same call is executing elsewhere, or
 * its executor died and the lease has not run out: call again later).
 *
 * @example
 * const result = await runTool(refund, { orderId: 'A-1', amount: '20.00' }, { db, agentId: 'support-bot' });
 * if (result.status === 'error' && result.code === 'approval_required') console.log(result.details);
 */
export async function runTool(
  tool: AnyGovernedTool,
  rawArguments: unknown,
  options: RunToolOptions = {},
): Promise<ToolRunResult> {
  options.signal?.throwIfAborted();
  requireGovernedTools([tool], options, 'runTool');
  const runtime = options.runtime ?? resolveRuntime(options, [tool]);
  const threadId = options.threadId ?? 'default';
  const args = toArguments(rawArguments);
  const call: ToolCall = {
    id:
      options.toolCallId ??
      (tool.idempotency === 'required' ? directCallId(tool, args) : `call_${randomUUID()}`),
    name: tool.name,
    args: args as Record<string, unknown>,
    type: 'tool_call',
  };
  const scope: CallScope = {
    threadId,
    runId: options.runId ?? threadId,
    turnIndex: options.turnIndex ?? 0,
    ...(options.metadata ? { metadata: options.metadata } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  };
  const suspend = options.suspend !== 'never' && canSuspend();
  const [plan] = await decideCalls([call], runtime, scope, { suspend, tool });
  return plan!.kind === 'allowed' ? executePlan(plan!, runtime, scope) : failureOf(plan!, runtime);
}

/** The same tool with the same arguments is the same call: one request, one idempotency key. */
function directCallId(tool: AnyGovernedTool, args: unknown): string {
  try {
    return `direct_${contentHash({ tool: tool.name, arguments: args }).slice(0, 24)}`;
  } catch {
    // Arguments with no JSON form are refused by validation; the id only names the refusal.
    return `direct_invalid_${tool.name}`;
  }
}
