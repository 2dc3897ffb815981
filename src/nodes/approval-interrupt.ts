import { type ApprovalManager, requiredApprovals } from '../approvals/index.js';
import { type AuditLog, deriveEventId } from '../audit/index.js';
import { VeridexError } from '../errors/index.js';
import type { PendingPlan } from './call-planner.js';

/** Marks the value a governed tool node interrupts with. */
export const APPROVALS_INTERRUPT = 'veridex.approvals';

/** Resume value that applies no decision, only re-reads the requests (decisions made elsewhere). */
export const RECHECK = { type: 'veridex.recheck' } as const;

/** One pending approval, as shown to whoever resumes the graph. */
export interface PendingApproval {
  approvalId: string;
  toolCallId: string;
  tool: string;
  arguments: Record<string, unknown>;
  safetyClass: string;
  route: string;
  ruleId: string;
  reason: string;
  requiredApprovals: number;
  approvals: Array<{ approver: string; decidedAt: string }>;
  /** Who may decide at the current tier (`'*'`: anyone but the proposer). */
  approvers: readonly string[] | '*';
  expiresAt: string;
  proposalHash: string;
}

/** The value of the governed tool node's `interrupt()`: `result.__interrupt__[0].value`. */
export interface ApprovalsInterrupt {
  type: typeof APPROVALS_INTERRUPT;
  threadId: string;
  approvals: PendingApproval[];
}

/** A decision in a resume payload: `new Command({ resume: decision | decision[] })`. */
export interface ResumeDecision {
  approvalId: string;
  decision: 'approve' | 'reject' | 'edit';
  approver: string;
  reason?: string;
  editedArgs?: Record<string, unknown>;
}

/** Builds the interrupt value listing every pending approval of this node run. */
export function approvalsInterrupt(
  threadId: string,
  pending: readonly PendingPlan[],
): ApprovalsInterrupt {
  return {
    type: APPROVALS_INTERRUPT,
    threadId,
    approvals: pending.map(({ request, tool, proposal }) => {
      const tier = request.tiers[request.tierIndex]!;
      return {
        approvalId: request.id,
        toolCallId: proposal.toolCallId,
        tool: tool.name,
        arguments: proposal.arguments,
        safetyClass: tool.safetyClass,
        route: request.route,
        ruleId: request.ruleId,
        reason: request.reason,
        requiredApprovals: requiredApprovals(request),
        approvals: request.decisions
          .filter((d) => d.decision === 'approve' && d.tier === request.tierIndex)
          .map((d) => ({ approver: d.approver, decidedAt: d.decidedAt })),
        approvers: tier.approvers,
        expiresAt: request.expiresAt,
        proposalHash: request.proposalHash,
      };
    }),
  };
}

/** What the node needs to apply a resume payload. */
export interface ResumeContext {
  threadId: string;
  runId: string;
  approvals: ApprovalManager;
  audit: AuditLog;
}

/**
 * Applies the decisions of one resume payload to this node run's pending requests. The
 * payload is untrusted: malformed entries (`resume_payload_invalid`) and ids that are not
 * pending here — forged, of another thread, already decided (`approval_not_found`) — are
 * refused with a `security_event` and change nothing; the approver rules are enforced by
 * the ApprovalManager. Decision ids derive from (thread, interrupt index, position), so the
 * same payload replayed by LangGraph on a later re-run is applied only once.
 */
export async function applyResume(
  value: unknown,
  pending: readonly PendingPlan[],
  interruptIndex: number,
  context: ResumeContext,
): Promise<void> {
  const entries =
    value === undefined || value === null || isRecheck(value)
      ? []
      : Array.isArray(value)
        ? value
        : [value];
  const pendingIds = new Set(pending.map((plan) => plan.request.id));
  for (const [position, entry] of entries.entries()) {
    const refuse = (kind: 'resume_payload_invalid' | 'approval_not_found', message: string) =>
      context.audit.append({
        threadId: context.threadId,
        runId: context.runId,
        eventId: deriveEventId(
          context.threadId,
          'security_event',
          'resume',
          interruptIndex,
          position,
        ),
        type: 'security_event',
        payload: { kind, message, interruptIndex, position },
      });
    if (
      typeof entry !== 'object' ||
      entry === null ||
      typeof (entry as ResumeDecision).approvalId !== 'string'
    ) {
      await refuse('resume_payload_invalid', 'resume entry is not an object with an approvalId');
      continue;
    }
    const decision = entry as ResumeDecision;
    if (!pendingIds.has(decision.approvalId)) {
      await refuse(
        'approval_not_found',
        `approval id "${decision.approvalId.slice(0, 80)}" is not pending in this thread`,
      );
      continue;
    }
    try {
      await context.approvals.decide(decision.approvalId, {
        decision: decision.decision,
        approver: decision.approver,
        ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
        ...(decision.editedArgs !== undefined ? { editedArgs: decision.editedArgs } : {}),
        decisionId: deriveEventId(context.threadId, 'resume', interruptIndex, position),
      });
    } catch (error) {
      // Refused decisions are recorded as security events by the manager; the request stays
      // as it was and the node interrupts again. Infrastructure failures stop the step.
      if (
        !VeridexError.is(error) ||
        error.code === 'db_unavailable' ||
        error.code === 'db_query_failed'
      )
        throw error;
    }
  }
}

function isRecheck(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { type?: unknown }).type === RECHECK.type
  );
}
