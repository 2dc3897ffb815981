import {
  type ApprovalDecisionRecord,
  type ApprovalRequest,
  requiredApprovals,
  type ShownProposal,
} from '../approvals/index.js';
import { argumentsHash, type SecretScrubber, type TraceEvent } from '../audit/index.js';
import type { ConversationMessage } from './run-view.js';

/** One decision as the inbox shows it. */
export interface DecisionView {
  approver: string;
  approverName?: string;
  decision: string;
  reason?: string;
  editedArgs?: Record<string, unknown>;
  tier: number;
  decidedAt: string;
  verified: boolean;
  /** How it was signed: an Ed25519 approver key or a passkey. */
  method?: 'ed25519' | 'webauthn';
  keyId?: string;
}

/** An approval request as the API returns it: what an approver needs to decide, redacted. */
export interface ApprovalView {
  id: string;
  threadId: string;
  runId: string;
  status: ApprovalRequest['status'];
  route: ApprovalRequest['route'];
  rule: { id: string; name: string };
  reason: string;
  proposalHash: string;
  /**
   * How `proposal` is bound to `proposalHash`, which is what approvers sign
   * (`ApprovalManager.shownProposal`): `hash` — it hashes to it; `redacted` — secrets were
   * scrubbed from it before it was stored, and it is the form the hash-chained audit log
   * recorded when the request was opened; `none` — the stored proposal was edited: nothing of
   * it is shown (`proposal`, `summary` and `highlights` empty, `proposalProblem` says why) and
   * it cannot be decided here (`proposal_tampered`).
   */
  proposalBinding: ShownProposal['binding'];
  proposalProblem?: string;
  /** Exactly the fields the proposal hash covers (a tool call: kind, tool, schema hash, arguments, thread, call id). */
  proposal: Record<string, unknown>;
  /** The tool the call is for, when it is a tool call. */
  toolName?: string;
  /** Amount, currency and recipient of a financial call, when the arguments name them. */
  highlights: { amount?: string; currency?: string; recipient?: string; memo?: string };
  /** Derived from `proposal` alone (a tool call's name and arguments): the row's own summary is not hashed. */
  summary: Record<string, unknown>;
  proposer: string;
  proposers: string[];
  quorum: {
    required: number;
    approvals: number;
    tier: { index: number; name: string; count: number };
    approvers: readonly string[] | '*';
  };
  decisions: DecisionView[];
  identityMode: ApprovalRequest['identityMode'];
  createdAt: string;
  expiresAt: string;
  decidedAt?: string;
}

/**
 * Whether the run continued after the request resolved (README "Resuming runs when approvals
 * resolve"): `waiting` until a resumer (or a client) resumes the thread, `resumed` at `at`
 * with the resumer's `outcome`, `retrying` after a failed attempt (`error`). Absent while the
 * request is pending. The resumer's bookkeeping, shown as is: it never clears a call.
 */
export interface ResumptionView {
  state: 'waiting' | 'resumed' | 'retrying';
  at?: string;
  outcome?: string;
  error?: string;
}

/** The detail view: the request plus the thread's trace up to the request. */
export interface ApprovalDetailView extends ApprovalView {
  resumption?: ResumptionView;
  /** The thread's audit events up to and including this request (at most the last 200). */
  trace: TraceEvent[];
  /**
   * The agent's reasoning behind the request: the last messages of the thread's latest
   * checkpoint (while the request waits, the conversation up to the call), sanitised.
   */
  reasoning: ConversationMessage[];
}

/** Approvals counted at the request's current tier. */
export function approvalsAtTier(request: ApprovalRequest): number {
  return request.decisions.filter(
    (decision) => decision.decision === 'approve' && decision.tier === request.tierIndex,
  ).length;
}

/**
 * What the API shows of a request. Its proposal only as `shown` binds it to the proposal hash
 * (`ApprovalManager.shownProposal`): never the row's `proposal` or `summary` as stored. Stored
 * proposals and reasons already passed the approval manager; everything free-form passes the
 * scrubber again here, so a secret the agent put in a tool argument is shown as
 * `[REDACTED:…]` to approvers too.
 */
export function approvalView(
  request: ApprovalRequest,
  scrubber: SecretScrubber,
  shown: ShownProposal,
): ApprovalView {
  const bound = shown.binding !== 'none';
  const proposal = bound ? scrubber.scrub(shown.proposal) : {};
  const args = (proposal as { arguments?: unknown }).arguments;
  const tier = request.tiers[request.tierIndex]!;
  return {
    id: request.id,
    threadId: request.threadId,
    runId: request.runId,
    status: request.status,
    route: request.route,
    rule: { id: request.ruleId, name: request.ruleName },
    reason: scrubber.scrubText(request.reason),
    proposalHash: request.proposalHash,
    proposalBinding: shown.binding,
    ...(shown.binding === 'none' ? { proposalProblem: shown.problem } : {}),
    proposal,
    ...(typeof proposal.toolName === 'string' ? { toolName: proposal.toolName } : {}),
    highlights: highlightsOf(args),
    summary: bound ? scrubber.scrub(shown.summary) : {},
    proposer: request.proposer,
    proposers: request.proposers,
    quorum: {
      required: requiredApprovals(request),
      approvals: approvalsAtTier(request),
      tier: { index: request.tierIndex, name: tier.name, count: request.tiers.length },
      approvers: tier.approvers,
    },
    decisions: request.decisions.map((recorded) => ({
      approver: recorded.approver,
      ...(recorded.approverName !== undefined ? { approverName: recorded.approverName } : {}),
      decision: recorded.decision,
      ...(recorded.reason !== undefined ? { reason: scrubber.scrubText(recorded.reason) } : {}),
      ...(recorded.editedArgs && editBound(recorded)
        ? { editedArgs: scrubber.scrub(recorded.editedArgs) }
        : {}),
      tier: recorded.tier,
      decidedAt: recorded.decidedAt,
      verified: recorded.verified === true,
      ...(recorded.signed
        ? {
            method: recorded.signed.keyId.startsWith('webauthn:') ? 'webauthn' : 'ed25519',
            keyId: recorded.signed.keyId,
          }
        : {}),
    })),
    identityMode: request.identityMode,
    createdAt: request.createdAt,
    expiresAt: request.expiresAt,
    ...(request.decidedAt ? { decidedAt: request.decidedAt } : {}),
  };
}

/**
 * Whether a decision's edited arguments are the ones its approver signed (`editedArgumentsHash`):
 * like the proposal, the row's copy is shown only when bound. Bare development-mode decisions
 * bind nothing and are marked `verified: false` anyway.
 */
function editBound(recorded: ApprovalDecisionRecord): boolean {
  const signedHash = recorded.signed?.statement.editedArgumentsHash;
  if (signedHash === undefined) return recorded.verified !== true;
  try {
    return argumentsHash(recorded.editedArgs ?? {}) === signedHash;
  } catch {
    return false;
  }
}

/** The thread's events up to and including the request's `approval_requested` event. */
export function traceUpTo(
  events: readonly TraceEvent[],
  approvalId: string,
  scrubber: SecretScrubber,
  limit = 200,
): TraceEvent[] {
  const index = events.findIndex(
    (event) => event.type === 'approval_requested' && event.payload.approvalId === approvalId,
  );
  const upTo = index === -1 ? events : events.slice(0, index + 1);
  return upTo.slice(-limit).map((event) => ({ ...event, payload: scrubber.scrub(event.payload) }));
}

function highlightsOf(args: unknown): ApprovalView['highlights'] {
  if (typeof args !== 'object' || args === null) return {};
  const record = args as Record<string, unknown>;
  const text = (value: unknown) =>
    typeof value === 'string' || typeof value === 'number'
      ? String(value).slice(0, 200)
      : undefined;
  const amount = text(record.amount);
  const currency = text(record.currency);
  const recipient = text(record.to ?? record.recipient ?? record.payee ?? record.iban);
  const memo = text(record.memo ?? record.description);
  return {
    ...(amount !== undefined ? { amount } : {}),
    ...(currency !== undefined ? { currency } : {}),
    ...(recipient !== undefined ? { recipient } : {}),
    ...(memo !== undefined ? { memo } : {}),
  };
}

/**
 * The resumption view of a resolved request: `resumed` only with the resumer's `run_resumed`
 * event in the thread's hash-chained log (its time and outcome are the event's); the columns
 * alone, which an insider can write, say `waiting` — or `retrying` with the last error.
 */
export function resumptionView(
  row: { resumed_at: Date | null; resume_outcome: string | null; resume_error: string | null },
  logged: TraceEvent | undefined,
): ResumptionView {
  if (logged) {
    const outcome = logged.payload.outcome;
    return {
      state: 'resumed',
      at: logged.timestamp,
      ...(typeof outcome === 'string' ? { outcome } : {}),
    };
  }
  if (row.resume_error && !row.resumed_at) {
    return { state: 'retrying', error: row.resume_error.slice(0, 500) };
  }
  return { state: 'waiting' };
}
