import { requiredApprovals } from '../approvals/index.js';
import type { ToolRunResult } from '../tools/index.js';
import type { AllowedPlan, CallPlan, FailedPlan } from './call-planner.js';

/** The `type` of every governance event on LangGraph's `custom` stream. */
export const GOVERNANCE_EVENT = 'veridex.governance';

/**
 * What a client streaming with `streamMode: 'custom'` (LangGraph's `writer`) learns about each
 * governed call (README "Governance events on the custom stream"): facts only — ids, names,
 * codes, routes — never arguments or results, which travel in the messages as they always do.
 */
export type GovernanceStreamEvent =
  | (EventBase & {
      /** The policy (and, for a call that waited, its approvers) cleared the call to run. */
      event: 'call_allowed';
      approvedBy: readonly string[];
    })
  | (EventBase & {
      /** The call will not run: `code` says why (`policy_denied`, `approval_rejected`, …). */
      event: 'call_refused';
      code: string;
    })
  | (EventBase & {
      /** The call waits for people; the run suspends with an approvals interrupt. */
      event: 'approval_requested';
      approvalId: string;
      route: string;
      quorum: { required: number; approved: number };
    })
  | (EventBase & {
      event: 'call_executed';
      /** True when the ledger replayed an earlier execution instead of running the tool. */
      replayed: boolean;
    })
  | (EventBase & { event: 'call_failed'; code: string });

interface EventBase {
  type: typeof GOVERNANCE_EVENT;
  threadId: string;
  toolCallId: string;
  tool: string;
}

/** Where a path writes its events: LangGraph's `writer` (absent: nothing is streamed). */
export type GovernanceEventSink = (event: GovernanceStreamEvent) => void;

/** A sink over LangGraph's `writer`, if the run streams `custom` events. */
export function sinkOf(writer: unknown): GovernanceEventSink | undefined {
  if (typeof writer !== 'function') return undefined;
  return (event) => {
    try {
      (writer as (chunk: unknown) => void)(event);
    } catch {
      // A client's stream is advisory: a failing writer never fails a governed call.
    }
  };
}

/** The events of a batch's decisions: cleared, refused or waiting for people. */
export function decisionEvents(
  threadId: string,
  plans: readonly CallPlan[],
): GovernanceStreamEvent[] {
  return plans.map((plan) => {
    const base = {
      type: GOVERNANCE_EVENT,
      threadId,
      toolCallId: plan.call.id ?? '',
      tool: plan.kind === 'failed' ? plan.call.name : plan.tool.name,
    } as const;
    if (plan.kind === 'allowed') {
      return { ...base, event: 'call_allowed', approvedBy: [...(plan as AllowedPlan).approvedBy] };
    }
    if (plan.kind === 'failed')
      return { ...base, event: 'call_refused', code: (plan as FailedPlan).code };
    const { request } = plan;
    return {
      ...base,
      event: 'approval_requested',
      approvalId: request.id,
      route: request.route,
      quorum: {
        required: requiredApprovals(request),
        approved: request.decisions.filter(
          (d) => d.decision === 'approve' && d.tier === request.tierIndex,
        ).length,
      },
    };
  });
}

/** The event of one execution's outcome. */
export function executionEvent(threadId: string, result: ToolRunResult): GovernanceStreamEvent {
  const base = {
    type: GOVERNANCE_EVENT,
    threadId,
    toolCallId: result.toolCallId,
    tool: result.toolName,
  } as const;
  return result.status === 'error'
    ? { ...base, event: 'call_failed', code: result.code }
    : { ...base, event: 'call_executed', replayed: result.replayed };
}
