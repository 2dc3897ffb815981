import { VeridexError, type VeridexErrorCode } from '../errors/index.js';
import { tryIdentityKey } from '../identity/index.js';
import type {
  ApprovalDecisionKind,
  ApprovalDecisionRecord,
  ApprovalRequest,
  ApprovalTier,
  SignedDecisionRecord,
} from './types.js';

/** The result of a state transition: the request to store, and the error to throw after storing it. */
export interface Transition {
  request: ApprovalRequest;
  changed: boolean;
  error?: VeridexError;
}

/**
 * One decision, its sender already authenticated (or knowingly not: `verified: false`), ready
 * to be checked against the request under its lock. Built by the ApprovalManager.
 */
export interface DecisionAttempt {
  /** Deterministic: a signed decision's id derives from its signature. */
  decisionId?: string;
  decision: ApprovalDecisionKind;
  /** Canonical approver id. */
  approver: string;
  approverName?: string;
  /** Canonical roles (from the directory). */
  roles: readonly string[];
  reason?: string;
  editedArgs?: Record<string, unknown>;
  verified: boolean;
  signed?: SignedDecisionRecord;
  /** The signing key's sponsor (from the directory): the decision also speaks for them. */
  sponsor?: string;
  /** Every sponsor up the chain (`sponsorChain`): the decision speaks for each. */
  sponsors?: string[];
}

/**
 * Every identity a decision speaks for: its approver and its key's sponsors (the whole chain),
 * as identity keys.
 */
export function speaksFor(decision: {
  approver: string;
  sponsor?: string;
  sponsors?: readonly string[];
}): string[] {
  return [
    decision.approver,
    ...(decision.sponsor ? [decision.sponsor] : []),
    ...(decision.sponsors ?? []),
  ].flatMap((identity) => tryIdentityKey(identity) ?? []);
}

/** Limits {@link applyDecision} enforces on signed statements. */
export interface DecisionRules {
  /** How far a statement's `decidedAt` may lie in the future, or before the request was opened. */
  maxClockSkewMs: number;
  /**
   * The identity mode of the process deciding (its `ApprovalManager`'s configuration). A bare
   * decision counts only when both this and the request say `unverified`: the request's
   * recorded mode alone is a database value an insider can flip.
   */
  identityMode: 'signed' | 'unverified';
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
 * Applies one decision to a request, enforcing every rule, each with its own code:
 * `decision_unsigned` (a bare decision on a request opened in signed mode),
 * `decision_mismatch` (signed for another request or another version of the proposal),
 * `decision_nonce_reused`, `decision_stale`, `approval_already_decided`, `approval_expired`,
 * `proposer_cannot_approve`, `approver_not_allowed`, `approver_duplicate`. Identities are
 * compared by their canonical skeleton, so `Payout-Bot`, `payout-bot ` and look-alikes are one
 * person. A decision whose id is already recorded is a no-op (replays).
 * Pure: returns the new state and, on refusal, the error (tier expiry is still stored).
 */
export function applyDecision(
  current: ApprovalRequest,
  attempt: DecisionAttempt,
  now: Date,
  rules: DecisionRules,
): Transition {
  if (
    attempt.decisionId &&
    current.decisions.some((recorded) => recorded.decisionId === attempt.decisionId)
  ) {
    return { request: current, changed: false };
  }
  const bindingProblem = checkBinding(current, attempt, now, rules);
  if (bindingProblem) return refuse(current, false, bindingProblem.code, bindingProblem.message);

  const advanced = advanceTiers(current, now);
  const request = advanced.request;
  const fail = (code: VeridexErrorCode, message: string) =>
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
  const approverKey = tryIdentityKey(attempt.approver);
  const speakers = speaksFor(attempt);
  if (
    approverKey === undefined ||
    [request.proposer, ...request.proposers].some((proposer) =>
      speakers.includes(tryIdentityKey(proposer) ?? ''),
    )
  ) {
    return fail(
      'proposer_cannot_approve',
      `"${attempt.approver}" proposed this version of the action (as the agent, its operator or the editor of its arguments) and cannot decide on it; another approver must.`,
    );
  }
  const tier = request.tiers[request.tierIndex]!;
  if (!mayDecideAt(tier, attempt)) {
    return fail(
      'approver_not_allowed',
      `"${attempt.approver}" may not decide at tier "${tier.name}" of approval ${request.id}; allowed: ${(tier.approvers as readonly string[]).join(', ')}.`,
    );
  }
  if (
    request.decisions.some((recorded) =>
      speaksFor(recorded).some((identity) => speakers.includes(identity)),
    )
  ) {
    return fail(
      'approver_duplicate',
      `"${attempt.approver}" already decided on approval ${request.id}${attempt.sponsor ? ` (or their key's sponsor "${attempt.sponsor}" did, whose invitation enrolled it)` : ''}; a different approver must give the next approval.`,
    );
  }

  const decidedAt = now.toISOString();
  const record: ApprovalDecisionRecord = {
    decisionId: attempt.decisionId ?? `${attempt.approver}:${decidedAt}`,
    approver: attempt.approver,
    ...(attempt.approverName !== undefined ? { approverName: attempt.approverName } : {}),
    decision: attempt.decision,
    ...(attempt.reason !== undefined ? { reason: attempt.reason } : {}),
    ...(attempt.editedArgs ? { editedArgs: attempt.editedArgs } : {}),
    tier: request.tierIndex,
    decidedAt,
    verified: attempt.verified,
    ...(attempt.signed ? { signed: attempt.signed } : {}),
    ...(attempt.sponsor ? { sponsor: attempt.sponsor } : {}),
    ...(attempt.sponsors && attempt.sponsors.length > 1 ? { sponsors: attempt.sponsors } : {}),
  };
  const decisions = [...request.decisions, record];
  const approvalsAtTier = decisions.filter(
    (recorded) => recorded.decision === 'approve' && recorded.tier === request.tierIndex,
  ).length;
  const status =
    attempt.decision === 'reject'
      ? 'rejected'
      : attempt.decision === 'edit'
        ? 'edited'
        : approvalsAtTier >= (tier.requiredApprovals ?? 1)
          ? 'approved'
          : 'pending';
  return {
    request: { ...request, decisions, status, ...(status !== 'pending' ? { decidedAt } : {}) },
    changed: true,
  };
}

/** Whether the attempt is the kind of decision this request accepts, bound to it, and fresh. */
function checkBinding(
  request: ApprovalRequest,
  attempt: DecisionAttempt,
  now: Date,
  rules: DecisionRules,
): { code: VeridexErrorCode; message: string } | undefined {
  if (!attempt.signed) {
    if (request.identityMode === 'unverified' && rules.identityMode === 'unverified') {
      return undefined;
    }
    return {
      code: 'decision_unsigned',
      message: `Approval ${request.id} counts only signed decisions: sign with the approver's key (signDecision, or \`veridex approvals approve <id> --key <file>\`). Bare names are accepted only by an ApprovalManager in the explicit identity: 'unverified' development mode.`,
    };
  }
  const { statement } = attempt.signed;
  if (statement.approvalId !== request.id) {
    return {
      code: 'decision_mismatch',
      message: `The decision was signed for approval ${statement.approvalId.slice(0, 80)}, not ${request.id}.`,
    };
  }
  if (statement.proposalHash !== request.proposalHash) {
    return {
      code: 'decision_mismatch',
      message: `The decision was signed for proposal ${statement.proposalHash.slice(0, 16)}…, but approval ${request.id} is about ${request.proposalHash.slice(0, 16)}…: review the current proposal and sign again.`,
    };
  }
  if (request.decisions.some((recorded) => recorded.signed?.statement.nonce === statement.nonce)) {
    return {
      code: 'decision_nonce_reused',
      message: `A decision with nonce ${statement.nonce} was already counted on approval ${request.id}; every statement needs a fresh nonce.`,
    };
  }
  const signedAt = Date.parse(statement.decidedAt);
  if (signedAt > now.getTime() + rules.maxClockSkewMs) {
    return {
      code: 'decision_stale',
      message: `The decision is dated ${statement.decidedAt}, in the future; check the approver's clock.`,
    };
  }
  if (signedAt < Date.parse(request.createdAt) - rules.maxClockSkewMs) {
    return {
      code: 'decision_stale',
      message: `The decision is dated ${statement.decidedAt}, before approval ${request.id} was opened at ${request.createdAt}.`,
    };
  }
  return undefined;
}

/**
 * Whether `attempt`'s approver may decide at `tier`: named there by id or by one of their
 * directory roles (`role:<name>`), or the tier takes any approver. Identities that do not
 * canonicalise never match. The one rule the inbox's listing, a decision and the proof before
 * execution all apply.
 */
export function mayDecideAt(
  tier: ApprovalTier,
  attempt: Pick<DecisionAttempt, 'approver' | 'roles'>,
): boolean {
  if (tier.approvers === '*') return true;
  const approverKey = tryIdentityKey(attempt.approver);
  if (approverKey === undefined) return false;
  const roleKeys = new Set(attempt.roles.map((role) => tryIdentityKey(role)));
  return tier.approvers.some((entry) => {
    const key = tryIdentityKey(entry.startsWith('role:') ? entry.slice('role:'.length) : entry);
    if (key === undefined) return false;
    return entry.startsWith('role:') ? roleKeys.has(key) : key === approverKey;
  });
}

function refuse(
  request: ApprovalRequest,
  changed: boolean,
  code: VeridexErrorCode,
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
