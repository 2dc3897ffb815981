import { VeridexError } from '../errors/index.js';
import type { ApprovalRequest, DecisionInput } from './types.js';

/** The result of a state transition: the request to store, and the error to throw after storing it. */
export interface Transition {
  request: ApprovalRequest;
  changed: boolean;
  error?: VeridexError;
}

/**
 * Moves a pending request past any tiers whose deadline has passed: to the next tier
 * (its deadline counted from the previous one), or, after the last, to `expired`.
 * Pure; the caller stores the result.
 */
export function advanceTiers(request: ApprovalRequest, now: Date): Transition {
  if (request.status !== 'pending') return { request, changed: false };
  let next = request;
  while (next.status === 'pending' && now.getTime() >= Date.parse(next.expiresAt)) {
    const following = next.tiers[next.tierIndex + 1];
    next = following
      ? {
          ...next,
          tierIndex: next.tierIndex + 1,
          expiresAt: new Date(Date.parse(next.expiresAt) + following.timeoutMs).toISOString(),
        }
      : { ...next, status: 'expired', decidedAt: next.expiresAt };
  }
  return { request: next, changed: next !== request };
}

/**
 * Applies one decision to a request, enforcing every approver rule, each with its own code:
 * `approval_already_decided`, `approval_expired`, `proposer_cannot_approve`,
 * `approver_not_allowed`, `approver_duplicate`, `resume_payload_invalid` (malformed input).
 * A decision whose `decisionId` is already recorded is a no-op (replayed resumes).
 * Pure: returns the new state and, on refusal, the error (tier expiry is still stored).
 */
export function applyDecision(
  current: ApprovalRequest,
  input: DecisionInput,
  now: Date,
): Transition {
  if (
    input.decisionId &&
    current.decisions.some((recorded) => recorded.decisionId === input.decisionId)
  ) {
    return { request: current, changed: false };
  }
  const malformed = describeMalformed(input);
  if (malformed) return refuse(current, false, 'resume_payload_invalid', malformed);

  const advanced = advanceTiers(current, now);
  const request = advanced.request;
  const fail = (code: Parameters<typeof refuse>[2], message: string) =>
    refuse(request, advanced.changed, code, message);
  if (request.status === 'expired') {
    return fail(
      'approval_expired',
      `Approval ${request.id} expired at ${request.expiresAt}; the call was not executed. Ask the agent to propose it again.`,
    );
  }
  if (request.status !== 'pending') {
    return fail(
      'approval_already_decided',
      `Approval ${request.id} was already ${request.status}; it accepts no more decisions.`,
    );
  }
  if (input.approver === request.proposer) {
    return fail(
      'proposer_cannot_approve',
      `"${input.approver}" proposed this action and cannot decide on it; another approver must.`,
    );
  }
  const tier = request.tiers[request.tierIndex]!;
  if (tier.approvers !== '*' && !tier.approvers.includes(input.approver)) {
    return fail(
      'approver_not_allowed',
      `"${input.approver}" may not decide at tier "${tier.name}" of approval ${request.id}; allowed: ${tier.approvers.join(', ')}.`,
    );
  }
  if (request.decisions.some((recorded) => recorded.approver === input.approver)) {
    return fail(
      'approver_duplicate',
      `"${input.approver}" already decided on approval ${request.id}; a different approver must give the next approval.`,
    );
  }

  const decidedAt = now.toISOString();
  const decisions = [
    ...request.decisions,
    {
      decisionId: input.decisionId ?? `${input.approver}:${decidedAt}`,
      approver: input.approver,
      decision: input.decision,
      ...(input.reason ? { reason: input.reason } : {}),
      ...(input.editedArgs ? { editedArgs: input.editedArgs } : {}),
      tier: request.tierIndex,
      decidedAt,
    },
  ];
  const approvalsAtTier = decisions.filter(
    (recorded) => recorded.decision === 'approve' && recorded.tier === request.tierIndex,
  ).length;
  const status =
    input.decision === 'reject'
      ? 'rejected'
      : input.decision === 'edit'
        ? 'edited'
        : approvalsAtTier >= (tier.requiredApprovals ?? 1)
          ? 'approved'
          : 'pending';
  return {
    request: { ...request, decisions, status, ...(status !== 'pending' ? { decidedAt } : {}) },
    changed: true,
  };
}

function describeMalformed(input: DecisionInput): string | undefined {
  if (typeof input !== 'object' || input === null) return 'a decision must be an object';
  if (!['approve', 'reject', 'edit'].includes(input.decision)) {
    return `decision must be "approve", "reject" or "edit", got ${JSON.stringify(input.decision)}`;
  }
  if (typeof input.approver !== 'string' || input.approver.trim() === '')
    return 'approver must be a non-empty string';
  if (input.reason !== undefined && typeof input.reason !== 'string')
    return 'reason must be a string';
  if (input.decision === 'edit') {
    const args = input.editedArgs;
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      return 'an edit decision needs editedArgs: the replacement arguments object';
    }
  }
  return undefined;
}

function refuse(
  request: ApprovalRequest,
  changed: boolean,
  code:
    | 'approval_already_decided'
    | 'approval_expired'
    | 'approver_not_allowed'
    | 'approver_duplicate'
    | 'proposer_cannot_approve'
    | 'resume_payload_invalid',
  message: string,
): Transition {
  return {
    request,
    changed,
    error: new VeridexError(code, message, {
      details: { approvalId: request.id, status: request.status },
    }),
  };
}
