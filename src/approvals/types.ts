import type { ApprovalRoute } from '../tools/types.js';

/** Where a request stands. Only `pending` accepts decisions. */
export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'edited' | 'expired';

/** What an approver can say. `edit` replaces the arguments; the edited proposal is re-evaluated. */
export type ApprovalDecisionKind = 'approve' | 'reject' | 'edit';

/** One tier of an escalation chain: who may approve, how many, and how long it waits. */
export interface ApprovalTier {
  name: string;
  /** Identities allowed to decide at this tier; `'*'` for anyone (the proposer never counts). */
  approvers: readonly string[] | '*';
  /** Distinct approvals needed at this tier (default 1). */
  requiredApprovals?: number;
  /** How long the tier waits before escalating to the next one. */
  timeoutMs: number;
}

/** A named escalation chain for the `policy_pack` route, e.g. tier1 (15 min) → tier2 (1 h) → auto-deny. */
export interface ApprovalPack {
  tiers: readonly ApprovalTier[];
  /** What happens when the last tier times out (default `deny`). */
  finalAction?: 'deny';
}

/** One recorded decision. */
export interface ApprovalDecisionRecord {
  /** Deterministic id, so a replayed decision is recognised instead of applied twice. */
  decisionId: string;
  approver: string;
  decision: ApprovalDecisionKind;
  reason?: string;
  editedArgs?: Record<string, unknown>;
  tier: number;
  decidedAt: string;
}

/** A stored request for human approval of one proposal. */
export interface ApprovalRequest {
  id: string;
  threadId: string;
  runId: string;
  /** The tool call (or write id) the request is about; with the thread it identifies the request. */
  subjectId: string;
  proposalHash: string;
  /** The JSON-safe proposal envelope approvers review (and that `proposalHash` covers). */
  proposal: Record<string, unknown>;
  /** Extra display facts (safety class, …); not hashed. */
  summary: Record<string, unknown>;
  route: ApprovalRoute;
  ruleId: string;
  ruleName: string;
  reason: string;
  /** The tiers in force; single-tier for `human_required` and `dual_approval`. */
  tiers: readonly ApprovalTier[];
  tierIndex: number;
  proposer: string;
  status: ApprovalStatus;
  createdAt: string;
  /** Deadline of the current tier. */
  expiresAt: string;
  decidedAt?: string;
  decisions: ApprovalDecisionRecord[];
}

/** Input of `ApprovalManager.decide`. */
export interface DecisionInput {
  decision: ApprovalDecisionKind;
  approver: string;
  reason?: string;
  /** Required for `edit`: the replacement arguments. */
  editedArgs?: Record<string, unknown>;
  /** Deterministic id; a decision with an id already recorded is a no-op (replay safety). */
  decisionId?: string;
}

/** Filter for `listPending`. */
export interface PendingFilter {
  threadId?: string;
  /** Only requests this identity may decide now. */
  approver?: string;
}
