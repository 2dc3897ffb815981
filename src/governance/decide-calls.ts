import type { ToolCall } from '@langchain/core/messages';
import { interrupt } from '@langchain/langgraph';
import type { DecisionRefusal } from '../approvals/index.js';
import { type AppendEventInput, AuditBatch, deriveEventId } from '../audit/index.js';
import { executeTool } from '../tools/execute-tool.js';
import type { AnyGovernedTool, ToolRunFailure, ToolRunResult } from '../tools/index.js';
import { modelSafeText } from '../tools/model-safe-text.js';
import { applyResume, approvalsInterrupt } from './approval-interrupt.js';
import {
  type AllowedPlan,
  type CallPlan,
  type FailedPlan,
  type PendingPlan,
  type PlanContext,
  planCall,
  refreshPlan,
} from './call-planner.js';
import type { CallScope, GovernanceRuntime } from './governance-runtime.js';
import { describeActions } from './hitl-protocol.js';
import { decisionEvents, executionEvent } from './stream-events.js';

/** How a path waits for people. */
export interface DecideOptions {
  /**
   * `true` where LangGraph can suspend the thread (inside a graph with a checkpointer): the
   * calls waiting for approval raise ONE `interrupt()` listing them, and resuming applies the
   * decisions. `false` elsewhere (an MCP client, a plain ToolNode without a checkpointer, a
   * script): a call that needs approval is refused with `approval_required`, naming the
   * request so it can be decided and the call sent again.
   */
  suspend: boolean;
  /** The tool object the caller holds (single-call paths): its own pin is checked, and it runs. */
  tool?: AnyGovernedTool;
  /**
   * Events of the caller's that go first in the planning events' append, in the same write
   * (the middleware's `run_started`, so recording the run costs no write of its own).
   */
  leading?: readonly AppendEventInput[];
  /**
   * False where this interrupt may be one of several a resume value reaches (the middleware's
   * per-call wait at the tool): bare HITL decisions, matched by position, are refused there.
   */
  positional?: boolean;
}

/**
 * Decides a batch of tool calls before anything runs — pins, arguments, policy for every
 * call, then approvals — and returns where each stands: `allowed` (run it with
 * {@link executePlan}), or `failed` (answer it with {@link failureOf}). The one decision
 * pipeline of every path to a tool. Calls are planned sequentially so the audit order is
 * deterministic; interrupts raised here propagate (LangGraph re-runs the caller on resume,
 * and decisions are replay-safe, so earlier resume values count once).
 */
export async function decideCalls(
  calls: readonly ToolCall[],
  runtime: GovernanceRuntime,
  scope: CallScope,
  options: DecideOptions,
): Promise<Array<AllowedPlan | FailedPlan>> {
  const context: PlanContext = {
    threadId: scope.threadId,
    runId: scope.runId,
    turnIndex: scope.turnIndex,
    proposer: runtime.proposer,
    registry: runtime.registry,
    policy: runtime.policy,
    approvals: runtime.approvals,
    audit: runtime.audit,
    events: new AuditBatch(runtime.audit),
    review: runtime.review,
  };
  for (const event of options.leading ?? []) context.events.append(event);
  let plans: CallPlan[] = [];
  const ids = new Set<string>();
  for (const [index, call] of calls.entries()) {
    if (call.id && ids.has(call.id)) {
      plans.push(reusedCallId(call, index, context));
      continue;
    }
    if (call.id) ids.add(call.id);
    plans.push(await planCall(call, context, options.tool));
  }
  await context.events.flush();
  // Decided ones now; those that wait are announced once more when they settle, below.
  for (const event of decisionEvents(scope.threadId, plans)) scope.emit?.(event);

  // What a resume refused is shown in the next interrupt, so whoever resumes learns why.
  let refusals: DecisionRefusal[] = [];
  for (let interruptIndex = 0; ; interruptIndex++) {
    const pending = plans.filter((plan): plan is PendingPlan => plan.kind === 'pending');
    if (pending.length === 0) break;
    if (!options.suspend) {
      plans = plans.map((plan) => (plan.kind === 'pending' ? approvalRequired(plan) : plan));
      break;
    }
    await runtime.audit.append({
      threadId: scope.threadId,
      runId: scope.runId,
      turnIndex: scope.turnIndex,
      eventId: deriveEventId(
        scope.threadId,
        'run_suspended',
        interruptIndex,
        ...pending.map((plan) => plan.request.id),
      ),
      type: 'run_suspended',
      payload: { approvalIds: pending.map((plan) => plan.request.id), interruptIndex },
    });
    // The value is stored in the checkpoint and shown to people: no registered secret in it.
    const descriptions = await describeActions(scope.threadId, pending, runtime.review);
    const value = runtime.audit.scrubber.scrub(
      approvalsInterrupt(scope.threadId, pending, refusals, runtime.review, descriptions),
    );
    const resume = interrupt(value);
    refusals = await applyResume(resume, pending, interruptIndex, {
      ...context,
      positional: options.positional !== false,
    });
    const waited = new Set(pending.map((plan) => plan.call.id));
    plans = await Promise.all(
      plans.map((plan) => (plan.kind === 'pending' ? refreshPlan(plan, context) : plan)),
    );
    const settled = plans.filter((plan) => plan.kind !== 'pending' && waited.has(plan.call.id));
    for (const event of decisionEvents(scope.threadId, settled)) scope.emit?.(event);
    // An edited call is planned again here: its `tool_proposed` and `policy_decision` events
    // must be written before it runs or is answered, whatever its new verdict.
    await context.events.flush();
  }
  return plans as Array<AllowedPlan | FailedPlan>;
}

/** Runs one allowed call exactly once per (thread, tool call), through the sandbox and sanitiser. */
export async function executePlan(
  plan: AllowedPlan,
  runtime: GovernanceRuntime,
  scope: CallScope,
): Promise<ToolRunResult> {
  const result = await runPlan(plan, runtime, scope);
  scope.emit?.(executionEvent(scope.threadId, result));
  return result;
}

function runPlan(
  plan: AllowedPlan,
  runtime: GovernanceRuntime,
  scope: CallScope,
): Promise<ToolRunResult> {
  return executeTool(plan.tool, plan.proposal.arguments, {
    threadId: scope.threadId,
    toolCallId: plan.proposal.toolCallId,
    runId: scope.runId,
    turnIndex: scope.turnIndex,
    proposalHash: plan.proposal.hash,
    approvedBy: plan.approvedBy,
    ...(scope.metadata ? { metadata: scope.metadata } : {}),
    registry: runtime.registry,
    audit: runtime.audit,
    idempotency: runtime.idempotency,
    atMostOnce: true,
    ...(runtime.sandbox ? { sandbox: runtime.sandbox } : {}),
    ...(runtime.secrets ? { secrets: runtime.secrets } : {}),
    ...(runtime.maxOutputBytes ? { maxOutputBytes: runtime.maxOutputBytes } : {}),
    ...(scope.signal ? { signal: scope.signal } : {}),
    ...(scope.runtimeFor ? { runtime: scope.runtimeFor(plan.call) } : {}),
    validated: { input: plan.input },
  });
}

/**
 * A call that will not run, as the model sees it: its code and a message made safe like tool
 * output (a policy rule's exception text or an approver's reason is untrusted too).
 */
export function failureOf(plan: FailedPlan, runtime: GovernanceRuntime): ToolRunFailure {
  return {
    status: 'error',
    toolName: plan.call.name,
    toolCallId: plan.call.id ?? '',
    idempotencyKey: '',
    attempts: 0,
    replayed: false,
    code: plan.code as ToolRunFailure['code'],
    message: modelSafeText(plan.message, runtime.audit.scrubber),
    details: plan.details ?? {},
  };
}

/**
 * A call under an id an earlier call of the same batch has: at most one call per id is ever
 * decided or run (the ledger and the approval are keyed by it), so the repeat is refused and
 * reported as what it is, not as tampering with the first.
 */
export function reusedCallId(call: ToolCall, index: number, context: PlanContext): FailedPlan {
  const id = (call.id ?? '').slice(0, 120);
  context.events.append({
    threadId: context.threadId,
    runId: context.runId,
    turnIndex: context.turnIndex,
    eventId: deriveEventId(context.threadId, 'security_event', 'tool_call_id_reused', id, index),
    type: 'security_event',
    payload: { kind: 'tool_call_id_reused', toolCallId: id, toolName: call.name.slice(0, 64) },
  });
  return {
    kind: 'failed',
    call,
    code: 'tool_call_id_reused',
    message: `Not run: another call of this turn has the id "${id}"; each call needs its own id.`,
  };
}

function approvalRequired(plan: PendingPlan): FailedPlan {
  return {
    kind: 'failed',
    call: plan.call,
    code: 'approval_required',
    message: `"${plan.tool.name}" needs ${plan.request.route.replace('_', ' ')} (approval ${plan.request.id}), and this path cannot wait for it. Decide the request (veridex approvals approve ${plan.request.id} --key …), then send the same call again.`,
    details: {
      approvalId: plan.request.id,
      route: plan.request.route,
      toolCallId: plan.call.id ?? '',
    },
  };
}
