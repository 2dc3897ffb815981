import { type AuditLog, canonicalJson, deriveEventId, sha256Hex } from '../audit/index.js';
import type { Database } from '../db/index.js';
import { VeridexError } from '../errors/index.js';
import { toolProposalEnvelope } from '../policy/proposals.js';
import type { PolicyDecision, Proposal } from '../policy/types.js';
import { advanceTiers, applyDecision } from './apply-decision.js';
import type { ApprovalStore } from './approval-store.js';
import { MemoryApprovalStore } from './memory-approval-store.js';
import { PostgresApprovalStore } from './postgres-approval-store.js';
import type {
  ApprovalPack,
  ApprovalRequest,
  ApprovalTier,
  DecisionInput,
  PendingFilter,
} from './types.js';

/** Who may approve the single-tier routes. Default `'*'`: anyone but the proposer. */
export interface ApproverPolicy {
  human_required?: readonly string[] | '*';
  dual_approval?: readonly string[] | '*';
}

/** Options for {@link ApprovalManager}. */
export interface ApprovalManagerOptions {
  /** Persist requests in this database (run `migrate()` first). Default: in memory. */
  db?: Database;
  /** A custom store (wins over `db`). */
  store?: ApprovalStore;
  audit?: AuditLog;
  approvers?: ApproverPolicy;
  /** Escalation chains for the `policy_pack` route, by name. */
  packs?: Readonly<Record<string, ApprovalPack>>;
  /** How long single-tier requests wait (default 24 h). */
  defaultTimeoutMs?: number;
  now?: () => Date;
}

/** Options for {@link ApprovalManager.request}. */
export interface RequestOptions {
  /** Bumped when an edited proposal needs a fresh request for the same tool call. */
  revision?: number;
  /** Display facts for approvers (not hashed). */
  summary?: Record<string, unknown>;
}

const DAY_MS = 24 * 60 * 60 * 1000;

type EscalateDecision = Extract<PolicyDecision, { verdict: 'escalate' }>;

/**
 * Stores approval requests and enforces who may decide them: single approval, dual approval
 * (two distinct approvers, the proposer never counts) and escalation chains (tiers with
 * timeouts, then auto-deny). Usable from any process that shares the database — the CLI,
 * a web handler, or the graph itself on resume.
 *
 * @example
 * const approvals = new ApprovalManager({ db, audit });
 * for (const request of await approvals.listPending()) {
 *   await approvals.decide(request.id, { decision: 'approve', approver: 'alice@example.com' });
 * }
 */
export class ApprovalManager {
  readonly store: ApprovalStore;
  readonly #options: ApprovalManagerOptions;
  readonly #now: () => Date;

  constructor(options: ApprovalManagerOptions = {}) {
    this.#options = options;
    this.store =
      options.store ??
      (options.db ? new PostgresApprovalStore(options.db) : new MemoryApprovalStore());
    this.#now = options.now ?? (() => new Date());
  }

  /** The deterministic id of the request for `subjectId` (a tool call id) in a thread. */
  static approvalId(threadId: string, subjectId: string, revision = 0): string {
    return `apr_${sha256Hex(canonicalJson([threadId, subjectId, revision])).slice(0, 24)}`;
  }

  /**
   * Creates the request for an escalated proposal, or returns the existing one: a LangGraph
   * node re-runs after every resume, and must find its request again rather than open another.
   * The caller compares the returned `proposalHash` with its proposal's to detect mutation.
   *
   * @throws VeridexError `config_invalid` for a `policy_pack` route naming an unknown pack.
   */
  async request(
    proposal: Proposal,
    decision: EscalateDecision,
    options: RequestOptions = {},
  ): Promise<ApprovalRequest> {
    const subjectId = subjectOf(proposal);
    const now = this.#now();
    const tiers = this.#tiersFor(decision);
    const created: ApprovalRequest = {
      id: ApprovalManager.approvalId(proposal.threadId, subjectId, options.revision ?? 0),
      threadId: proposal.threadId,
      runId: proposal.runId,
      subjectId,
      proposalHash: proposal.hash,
      proposal: envelopeOf(proposal),
      summary: options.summary ?? {},
      route: decision.route,
      ruleId: decision.ruleId,
      ruleName: decision.ruleName,
      reason: decision.reason,
      tiers,
      tierIndex: 0,
      proposer: proposal.proposer,
      status: decision.route === 'auto' ? 'approved' : 'pending',
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + tiers[0]!.timeoutMs).toISOString(),
      ...(decision.route === 'auto' ? { decidedAt: now.toISOString() } : {}),
      decisions: [],
    };
    const stored = await this.store.insertIfAbsent(created);
    await this.#audit(stored, 'approval_requested', [stored.id], {
      approvalId: stored.id,
      proposalHash: stored.proposalHash,
      route: stored.route,
      ruleId: stored.ruleId,
      reason: stored.reason,
      requiredApprovals: requiredApprovals(stored),
      expiresAt: stored.expiresAt,
      proposer: stored.proposer,
      ...(proposal.kind === 'tool'
        ? { toolName: proposal.toolName, toolCallId: proposal.toolCallId }
        : {}),
    });
    return stored;
  }

  /** The request with this id, with tier timeouts applied (and stored) as of now. */
  async get(id: string): Promise<ApprovalRequest | undefined> {
    const result = await this.store.update(id, (current) => {
      const { request, changed } = advanceTiers(current, this.#now());
      return { next: changed ? request : undefined, result: request };
    });
    if (result) await this.#auditResolution(result);
    return result;
  }

  /** Like {@link get}, but an unknown id is an error. @throws VeridexError `approval_not_found`. */
  async require(id: string): Promise<ApprovalRequest> {
    const request = await this.get(id);
    if (!request) throw notFound(id);
    return request;
  }

  /** Pending requests, oldest first; with `approver`, only those this identity may decide now. */
  async listPending(filter: PendingFilter = {}): Promise<ApprovalRequest[]> {
    await this.sweep();
    const pending = await this.store.listPending(filter.threadId);
    if (!filter.approver) return pending;
    const approver = filter.approver;
    return pending.filter((request) => {
      const tier = request.tiers[request.tierIndex]!;
      return (
        approver !== request.proposer &&
        (tier.approvers === '*' || tier.approvers.includes(approver)) &&
        !request.decisions.some((recorded) => recorded.approver === approver)
      );
    });
  }

  /** Every request of a thread, oldest first (for evidence and UIs). */
  listByThread(threadId: string): Promise<ApprovalRequest[]> {
    return this.store.listByThread(threadId);
  }

  /**
   * Records one decision under a row lock and returns the updated request.
   * A decision with an already-recorded `decisionId` is a no-op (replays are safe).
   *
   * @throws VeridexError `approval_not_found`, `approval_already_decided`, `approval_expired`,
   *   `approver_not_allowed`, `approver_duplicate`, `proposer_cannot_approve`, `resume_payload_invalid`;
   *   each refusal also writes a `security_event`.
   */
  async decide(id: string, input: DecisionInput): Promise<ApprovalRequest> {
    const outcome = await this.store.update(id, (current) => {
      const transition = applyDecision(current, input, this.#now());
      return { next: transition.changed ? transition.request : undefined, result: transition };
    });
    if (!outcome) {
      const error = notFound(id);
      await this.#auditRefusal(undefined, id, input, error);
      throw error;
    }
    if (outcome.error) {
      await this.#auditResolution(outcome.request);
      await this.#auditRefusal(outcome.request, id, input, outcome.error);
      throw outcome.error;
    }
    await this.syncAudit(outcome.request);
    return outcome.request;
  }

  /**
   * Applies tier timeouts to every pending request: escalates to the next tier, or expires
   * (auto-deny) after the last. Returns the requests that changed.
   */
  async sweep(): Promise<ApprovalRequest[]> {
    const changed: ApprovalRequest[] = [];
    for (const pending of await this.store.listPending()) {
      if (this.#now().getTime() < Date.parse(pending.expiresAt)) continue;
      const updated = await this.store.update(pending.id, (current) => {
        const transition = advanceTiers(current, this.#now());
        return { next: transition.changed ? transition.request : undefined, result: transition };
      });
      if (updated?.changed) {
        changed.push(updated.request);
        await this.#auditResolution(updated.request);
      }
    }
    return changed;
  }

  /**
   * Writes any missing `approval_decided` / `approval_resolved` events for `request`
   * (deterministic ids, so this is safe to call again; it repairs a crash between the
   * decision's commit and its audit append).
   */
  async syncAudit(request: ApprovalRequest): Promise<void> {
    for (const recorded of request.decisions) {
      await this.#audit(request, 'approval_decided', [request.id, recorded.decisionId], {
        approvalId: request.id,
        approver: recorded.approver,
        decision: recorded.decision,
        tier: recorded.tier,
        ...(recorded.reason ? { reason: recorded.reason } : {}),
        ...(recorded.editedArgs ? { editedArgs: recorded.editedArgs } : {}),
      });
    }
    await this.#auditResolution(request);
  }

  #tiersFor(decision: EscalateDecision): ApprovalTier[] {
    const timeoutMs = decision.timeoutMs ?? this.#options.defaultTimeoutMs ?? DAY_MS;
    switch (decision.route) {
      case 'auto':
        return [{ name: 'auto', approvers: '*', requiredApprovals: 0, timeoutMs }];
      case 'human_required':
        return [
          {
            name: 'approver',
            approvers: this.#options.approvers?.human_required ?? '*',
            requiredApprovals: 1,
            timeoutMs,
          },
        ];
      case 'dual_approval':
        return [
          {
            name: 'dual',
            approvers: this.#options.approvers?.dual_approval ?? '*',
            requiredApprovals: 2,
            timeoutMs,
          },
        ];
      case 'policy_pack': {
        const pack = decision.pack ? this.#options.packs?.[decision.pack] : undefined;
        if (!pack || pack.tiers.length === 0) {
          throw new VeridexError(
            'config_invalid',
            `Rule "${decision.ruleId}" escalates to policy pack "${decision.pack}", but the ApprovalManager has no such pack (known: ${Object.keys(this.#options.packs ?? {}).join(', ') || 'none'}).`,
          );
        }
        return [...pack.tiers];
      }
    }
  }

  async #auditResolution(request: ApprovalRequest): Promise<void> {
    if (request.status === 'pending') return;
    await this.#audit(request, 'approval_resolved', [request.id], {
      approvalId: request.id,
      status: request.status,
      approvers: request.decisions.filter((d) => d.decision !== 'reject').map((d) => d.approver),
      decidedAt: request.decidedAt ?? null,
    });
  }

  async #auditRefusal(
    request: ApprovalRequest | undefined,
    id: string,
    input: DecisionInput,
    error: VeridexError,
  ) {
    const audit = this.#options.audit;
    if (!audit || !request) return;
    const approver = typeof input?.approver === 'string' ? input.approver : String(input?.approver);
    await audit.append({
      threadId: request.threadId,
      runId: request.runId,
      eventId: deriveEventId(
        request.threadId,
        'decision_refused',
        id,
        error.code,
        input?.decisionId ?? approver,
      ),
      type: 'security_event',
      payload: { kind: error.code, approvalId: id, approver, message: error.message },
    });
  }

  async #audit(
    request: ApprovalRequest,
    type: 'approval_requested' | 'approval_decided' | 'approval_resolved',
    idParts: string[],
    payload: Record<string, unknown>,
  ) {
    await this.#options.audit?.append({
      threadId: request.threadId,
      runId: request.runId,
      eventId: deriveEventId(request.threadId, type, ...idParts),
      type,
      payload,
    });
  }
}

function notFound(id: string): VeridexError {
  return new VeridexError(
    'approval_not_found',
    `No approval request with id "${id}". Check the id (veridex approvals list).`,
    {
      details: { approvalId: id },
    },
  );
}

/** Distinct approvals needed at the request's current tier. */
export function requiredApprovals(request: ApprovalRequest): number {
  return request.tiers[request.tierIndex]?.requiredApprovals ?? 1;
}

function subjectOf(proposal: Proposal): string {
  switch (proposal.kind) {
    case 'tool':
      return proposal.toolCallId;
    case 'memory_write':
      return proposal.writeId;
    case 'handoff':
      return `${proposal.from}->${proposal.to}:${proposal.payloadHash}`;
  }
}

function envelopeOf(proposal: Proposal): Record<string, unknown> {
  if (proposal.kind === 'tool') return { ...toolProposalEnvelope(proposal) };
  const { hash: _hash, ...rest } = proposal;
  return rest;
}
