import type { DecisionStatement, SignedDecision } from '../identity/index.js';
import type { ApprovalRoute } from '../tools/types.js';

/** Where a request stands. Only `pending` accepts decisions. */
export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'edited' | 'expired';

/** What an approver can say. `edit` replaces the arguments; the edited proposal is re-evaluated. */
export type ApprovalDecisionKind = 'approve' | 'reject' | 'edit';

/** One tier of an escalation chain: who may approve, how many, and how long it waits. */
export interface ApprovalTier {
  name: string;
  /**
   * Who may decide at this tier: approver ids and `role:<name>` entries (compared in canonical
   * form, look-alikes included), or `'*'` for any registered approver. Proposers never count.
   */
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

/** The signed part of a recorded decision: enough to verify it offline. */
export interface SignedDecisionRecord {
  statement: DecisionStatement;
  keyId: string;
  signature: string;
  /** The approver key's public key (base64; raw Ed25519, or a passkey's COSE key) when it was counted. */
  publicKey: string;
  /** For a passkey: the assertion (besides `signature`) and the relying party it was made for. */
  webauthn?: {
    authenticatorData: string;
    clientDataJSON: string;
    credentialId: string;
    rpId: string;
    /** The origins the key may decide on, as the directory sealed them (absent: none recorded). */
    origins?: string[];
  };
}

/** One recorded decision. */
export interface ApprovalDecisionRecord {
  /** Deterministic id, so a replayed decision is recognised instead of applied twice. */
  decisionId: string;
  /** The approver's canonical id. */
  approver: string;
  /** What inboxes show (the directory's display name). */
  approverName?: string;
  decision: ApprovalDecisionKind;
  reason?: string;
  editedArgs?: Record<string, unknown>;
  tier: number;
  /** When the decision was counted (server time). */
  decidedAt: string;
  /** False for a bare-string decision in the `unverified` development mode. */
  verified: boolean;
  /** The approver's signed statement (every verified decision has one). */
  signed?: SignedDecisionRecord;
  /**
   * The sponsor of the key that signed it (see `WebAuthnApproverKey.sponsor`): the decision also
   * speaks for them. Recorded for display; the proof reads it from the directory again.
   */
  sponsor?: string;
  /** The whole chain of sponsors above the key (see `sponsorChain`), when it goes further. */
  sponsors?: string[];
}

/**
 * How decisions on a request are authenticated, fixed when the request is opened:
 * `signed` (the default) counts only decisions signed by a registered approver key;
 * `unverified` is an explicit development mode that also counts bare-string decisions,
 * marking each one unverified in the audit log and the evidence.
 */
export type IdentityMode = 'signed' | 'unverified';

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
  /** The proposing agent, as configured (for display). */
  proposer: string;
  /**
   * Every identity that proposed this version of the call, canonical: the agent, its
   * operators, and whoever edited the arguments. None of them counts as an approver.
   */
  proposers: string[];
  identityMode: IdentityMode;
  status: ApprovalStatus;
  createdAt: string;
  /** Deadline of the current tier. */
  expiresAt: string;
  decidedAt?: string;
  decisions: ApprovalDecisionRecord[];
}

/**
 * A bare-string decision: who decides is whatever the caller writes. Counted only on requests
 * opened in the `unverified` development mode; refused (`decision_unsigned`) everywhere else.
 */
export interface UnverifiedDecision {
  decision: ApprovalDecisionKind;
  approver: string;
  reason?: string;
  /** Required for `edit`: the replacement arguments. */
  editedArgs?: Record<string, unknown>;
  /** Deterministic id; a decision with an id already recorded is a no-op (replay safety). */
  decisionId?: string;
}

/** Input of `ApprovalManager.decide`: a signed decision (see `signDecision`), or a bare one in development mode. */
export type DecisionInput = SignedDecision | UnverifiedDecision;

/** A decision that was not counted, as reported to whoever sent it. */
export interface DecisionRefusal {
  /** The approval the decision named, when it named one. */
  approvalId?: string;
  /** Who the decision claimed to be from (as sent; not verified). */
  approver?: string;
  /** The stable error code, e.g. `decision_signature_invalid`, `proposer_cannot_approve`. */
  code: string;
  message: string;
}

/** Filter for `listPending`. */
export interface PendingFilter {
  threadId?: string;
  /** Only requests this identity may decide now (compared canonically). */
  approver?: string;
}
