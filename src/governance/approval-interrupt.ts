import {
  type ApprovalManager,
  claimedApprover,
  type DecisionRefusal,
  requiredApprovals,
  type UnverifiedDecision,
} from '../approvals/index.js';
import { type AuditLog, deriveEventId } from '../audit/index.js';
import { VeridexError } from '../errors/index.js';
import { isSignedDecision, type SignedDecision } from '../identity/index.js';
import type { PendingPlan } from './call-planner.js';
import {
  fromHitlResponse,
  type HitlRequest,
  hitlRequestOf,
  isHitlResponse,
} from './hitl-protocol.js';
import { decisionNotAllowed, isReviewDecision, type ReviewConfigs } from './review-config.js';

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
  /** Approvals counted at the current tier. */
  approvals: Array<{ approver: string; decidedAt: string }>;
  /** Every decision counted so far, with who signed it. */
  decisions: Array<{
    approver: string;
    approverName?: string;
    decision: string;
    tier: number;
    decidedAt: string;
    verified: boolean;
    keyId?: string;
  }>;
  /** Decisions for this approval in the last resume that were refused, with their codes. */
  refusals: DecisionRefusal[];
  /** Who may decide at the current tier (`'*'`: any registered approver but the proposers). */
  approvers: readonly string[] | '*';
  /** Identities that proposed this version and never count as approvers. */
  proposers: string[];
  /** `signed` unless the manager runs in the explicit `unverified` development mode. */
  identityMode: string;
  expiresAt: string;
  proposalHash: string;
}

/**
 * The value of the governed tool node's (and the createAgent middleware's) `interrupt()`:
 * `result.__interrupt__[0].value`. Its `actionRequests` and `reviewConfigs` are the shape of
 * LangChain's `humanInTheLoopMiddleware`, so HITL clients (Agent Chat UI) render it; `approvals`
 * carries the full picture (decisions counted, refusals, who may decide).
 */
export interface ApprovalsInterrupt extends HitlRequest {
  type: typeof APPROVALS_INTERRUPT;
  threadId: string;
  approvals: PendingApproval[];
  /**
   * Entries of the last resume payload that named no pending approval of this interrupt
   * (malformed, unknown or foreign ids), with their codes. Per-approval refusals are on each approval.
   */
  refusals: DecisionRefusal[];
}

/**
 * A decision in a resume payload: `new Command({ resume: decision | decision[] })`. A signed
 * decision (`signDecision(...)`) names its approval inside its statement; a bare one —
 * counted only in the `unverified` development mode — names it in `approvalId`.
 */
export type ResumeDecision = SignedDecision | (UnverifiedDecision & { approvalId: string });

/** The approval a resume entry names, if it names one. */
export function approvalIdOf(entry: unknown): string | undefined {
  if (isSignedDecision(entry)) {
    const id = (entry.statement as { approvalId?: unknown }).approvalId;
    return typeof id === 'string' ? id : undefined;
  }
  const id = (entry as { approvalId?: unknown } | null | undefined)?.approvalId;
  return typeof id === 'string' ? id : undefined;
}

/**
 * Builds the interrupt value listing every pending approval of this node run, with the
 * refusals of the resume that led here (so whoever resumes learns why it is still suspended).
 */
export function approvalsInterrupt(
  threadId: string,
  pending: readonly PendingPlan[],
  refusals: readonly DecisionRefusal[] = [],
  review?: ReviewConfigs,
  descriptions?: readonly (string | undefined)[],
): ApprovalsInterrupt {
  const ids = new Set(pending.map((plan) => plan.request.id));
  return {
    ...hitlRequestOf(pending, review, descriptions),
    type: APPROVALS_INTERRUPT,
    threadId,
    refusals: refusals.filter(
      (refusal) => refusal.approvalId === undefined || !ids.has(refusal.approvalId),
    ),
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
        decisions: request.decisions.map((d) => ({
          approver: d.approver,
          ...(d.approverName !== undefined ? { approverName: d.approverName } : {}),
          decision: d.decision,
          tier: d.tier,
          decidedAt: d.decidedAt,
          verified: d.verified === true,
          ...(d.signed ? { keyId: d.signed.keyId } : {}),
        })),
        refusals: refusals.filter((refusal) => refusal.approvalId === request.id),
        approvers: tier.approvers,
        proposers: request.proposers,
        identityMode: request.identityMode,
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
  /** Decisions reviewers may take per tool (`decision_not_allowed` for the others). */
  review?: ReviewConfigs | undefined;
  /**
   * False where this interrupt may be one of several the same resume value reaches (one per
   * call, at the tool): bare HITL decisions, matched by position, are then refused, so one
   * `{ decisions: [{ type: 'approve' }] }` cannot approve every waiting call at once.
   */
  positional?: boolean;
}

/**
 * Applies the decisions of one resume payload to this node run's pending requests and
 * returns what was refused. The payload is untrusted: malformed entries
 * (`resume_payload_invalid`) and ids that are not pending here — forged, of another thread,
 * already decided (`approval_not_found`) — are refused with a `security_event` and change
 * nothing; signatures and approver rules are enforced by the ApprovalManager. Signed
 * decisions are identified by their signature, bare ones by (thread, interrupt index,
 * position), so the same payload replayed by LangGraph on a later re-run counts once.
 * LangChain's HITL form `{ decisions: [...] }` is read too (see `fromHitlResponse`).
 */
export async function applyResume(
  value: unknown,
  pending: readonly PendingPlan[],
  interruptIndex: number,
  context: ResumeContext,
): Promise<DecisionRefusal[]> {
  const refusals: DecisionRefusal[] = [];
  const entries =
    value === undefined || value === null || isRecheck(value)
      ? []
      : isHitlResponse(value)
        ? fromHitlResponse(value, pending, context.positional !== false)
        : Array.isArray(value)
          ? value
          : [value];
  const pendingIds = new Set(pending.map((plan) => plan.request.id));
  for (const [position, entry] of entries.entries()) {
    const refuse = (
      kind: 'resume_payload_invalid' | 'approval_not_found' | 'decision_not_allowed',
      message: string,
    ) => {
      refusals.push({
        ...(approvalIdOf(entry) !== undefined
          ? { approvalId: approvalIdOf(entry)!.slice(0, 80) }
          : {}),
        code: kind,
        message,
      });
      return context.audit.append({
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
    };
    const approvalId =
      typeof entry === 'object' && entry !== null ? approvalIdOf(entry) : undefined;
    if (approvalId === undefined) {
      const why = (entry as { invalidDecision?: unknown } | null)?.invalidDecision;
      await refuse(
        'resume_payload_invalid',
        typeof why === 'string'
          ? `a { decisions } entry was refused: ${why}`
          : 'a resume entry must be a signed decision (signDecision) or, in the unverified development mode, an object with an approvalId',
      );
      continue;
    }
    if (!pendingIds.has(approvalId)) {
      await refuse(
        'approval_not_found',
        `approval id "${approvalId.slice(0, 80)}" is not pending in this thread`,
      );
      continue;
    }
    const tool = pending.find((plan) => plan.request.id === approvalId)!.tool.name;
    const taken = isSignedDecision(entry)
      ? entry.statement.decision
      : (entry as { decision?: unknown }).decision;
    // A type that is no decision at all is malformed: the manager refuses it as such.
    const notAllowed = isReviewDecision(taken)
      ? decisionNotAllowed(context.review, tool, taken)
      : undefined;
    if (notAllowed !== undefined) {
      await refuse('decision_not_allowed', notAllowed);
      continue;
    }
    try {
      await context.approvals.decide(
        approvalId,
        isSignedDecision(entry)
          ? entry
          : {
              ...(entry as UnverifiedDecision),
              decisionId: deriveEventId(context.threadId, 'resume', interruptIndex, position),
            },
        // This run goes on with the outcome: no resumer must take the resolution too.
        { resumedInGraph: true },
      );
    } catch (error) {
      // Refused decisions are recorded as security events by the manager; the request stays
      // as it was and the node interrupts again, listing the refusal. Infrastructure failures
      // stop the step.
      if (
        !VeridexError.is(error) ||
        error.code === 'db_unavailable' ||
        error.code === 'db_query_failed' ||
        error.code === 'db_not_migrated'
      )
        throw error;
      refusals.push({
        approvalId,
        approver: claimedApprover(entry),
        code: error.code,
        message: error.message,
      });
    }
  }
  return refusals;
}

function isRecheck(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { type?: unknown }).type === RECHECK.type
  );
}
