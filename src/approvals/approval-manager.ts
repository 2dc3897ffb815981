import { type AuditLog, deriveEventId, sha256Hex } from '../audit/index.js';
import type { Database } from '../db/index.js';
import { VeridexError } from '../errors/index.js';
import {
  type ApproverDirectory,
  type ApproverInit,
  authenticateDecision,
  canonicalIdentity,
  DIRECTORY_AUDIT_THREAD,
  isSignedDecision,
  MemoryApproverDirectory,
  PostgresApproverDirectory,
  tryIdentityKey,
  type UnsealedEntry,
} from '../identity/index.js';
import { toolProposalEnvelope } from '../policy/proposals.js';
import type { PolicyDecision, Proposal } from '../policy/types.js';
import {
  advanceTiers,
  applyDecision,
  type DecisionAttempt,
  mayDecideAt,
} from './apply-decision.js';
import { deriveApprovalId } from './approval-id.js';
import type { ApprovalStore } from './approval-store.js';
import { MemoryApprovalStore } from './memory-approval-store.js';
import { PostgresApprovalStore } from './postgres-approval-store.js';
import { type ApprovalProof, proveEdit, proveQuorum } from './prove-approval.js';
import { AtRestScrubber, refuseSecretsInEdit } from './scrub-at-rest.js';
import { bindShownProposal, type ShownProposal, storedEnvelope } from './shown-proposal.js';
import { sponsorChain } from './sponsor-chain.js';
import type {
  ApprovalPack,
  ApprovalRequest,
  ApprovalTier,
  DecisionInput,
  IdentityMode,
  PendingFilter,
} from './types.js';
import { describeMalformedUnverified } from './unverified-decision.js';

/**
 * Who may approve the single-tier routes: approver ids and `role:<name>` entries, or `'*'`
 * (the default) for any registered approver. Proposers never count.
 */
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
  /**
   * The hash-chained audit log. Required with `db` or a custom `store` (README "What approvers
   * see is what they sign"): a stored request's row is a claim an insider can rewrite, and the
   * log is what binds it — the redacted form approvers are shown, the tier a decision counted
   * at, a rejection. Optional only for the in-memory store, which no other process can reach.
   */
  audit?: AuditLog;
  /**
   * Who may decide and with which keys: a directory, or the approvers to hold in memory.
   * Default: the directory in `db` (`veridex approvers add`), else an empty one — so nothing
   * can be approved until someone is registered.
   */
  approvers?: ApproverDirectory | readonly ApproverInit[];
  /** Allowlists for the single-tier routes (policy packs name theirs per tier). */
  allow?: ApproverPolicy;
  /**
   * How decisions are authenticated on the requests this manager opens. Default `signed`:
   * only decisions signed by a registered approver key count. `unverified` is an explicit
   * development mode that also counts bare names, each marked unverified in the audit log,
   * the evidence and `veridex verify`. Never use it where anything real is at stake.
   */
  identity?: IdentityMode;
  /** People who operate the agent: like the agent itself, they never approve its proposals. */
  operators?: readonly string[];
  /** Escalation chains for the `policy_pack` route, by name. */
  packs?: Readonly<Record<string, ApprovalPack>>;
  /** How long single-tier requests wait (default 24 h). */
  defaultTimeoutMs?: number;
  /** How far a signed decision's time may be off the server's (default 5 minutes). */
  maxClockSkewMs?: number;
  /**
   * A clock, for tests. By default deadlines are set and judged, and decisions dated, by the
   * store's clock — the database's, which every process shares — so a process whose own clock
   * is off can neither approve after a deadline nor expire a request early; the process clock
   * only for the in-memory store.
   */
  now?: () => Date;
}

/** Options for {@link ApprovalManager.request}. */
export interface RequestOptions {
  /** Bumped when an edited proposal needs a fresh request for the same tool call. */
  revision?: number;
  /** Display facts for approvers (not hashed). */
  summary?: Record<string, unknown>;
  /** More identities that proposed this version (e.g. whoever edited its arguments). */
  proposers?: readonly string[];
  /**
   * When the request was first opened, if earlier than now (a request moved from another
   * system, whose signed decisions must not look older than it). Never later than now.
   */
  openedAt?: Date;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const DEFAULT_CLOCK_SKEW_MS = 5 * 60 * 1000;

type EscalateDecision = Extract<PolicyDecision, { verdict: 'escalate' }>;

/**
 * Stores approval requests and enforces who may decide them: single approval, dual approval
 * (two distinct approvers; the agent, its operators and whoever edited the arguments never
 * count) and escalation chains (tiers with timeouts, then auto-deny). A decision counts only
 * when signed by a key the approver directory holds for the approver it names; identities are
 * compared in canonical form, look-alikes included. Usable from any process that shares the
 * database — the CLI, a web handler, or the graph itself on resume.
 *
 * @example
 * const approvals = new ApprovalManager({ db, audit });   // approvers: `veridex approvers add`
 * for (const request of await approvals.listPending()) {
 *   await approvals.decide(request.id, signDecision({ request, decision: 'approve', approver: 'alice@corp' }, aliceKey));
 * }
 */
export class ApprovalManager {
  readonly store: ApprovalStore;
  /** The approvers whose signed decisions count. */
  readonly directory: ApproverDirectory;
  readonly #options: ApprovalManagerOptions;
  readonly #now: () => Date;
  readonly #operators: string[];
  // Without an audit log's scrubber, credential-shaped strings and the secrets other processes
  // registered in the database are still kept out of what the approvals table stores.
  readonly #atRest: AtRestScrubber;
  readonly #unsealedReported = new Set<string>();

  /**
   * @throws VeridexError `config_invalid` for `db` or `store` without `audit`;
   * `identity_invalid` / `identity_ambiguous` for bad operators or approvers.
   */
  constructor(options: ApprovalManagerOptions = {}) {
    const shared = options.db || (options.store && !(options.store instanceof MemoryApprovalStore));
    if (shared && !options.audit) {
      // Without the log, the first `approval_requested` event of a request the row claims could
      // be written by whoever edits the row, and the inbox would show the edit as bound.
      throw new VeridexError(
        'config_invalid',
        'An ApprovalManager that keeps requests in a database (db or store) needs the audit log they are recorded in: new ApprovalManager({ db, audit: new AuditLog({ store: new PostgresAuditStore(db) }) }).',
      );
    }
    this.#options = options;
    this.store =
      options.store ??
      (options.db ? new PostgresApprovalStore(options.db) : new MemoryApprovalStore());
    this.#now = options.now ?? (() => new Date());
    const approvers = options.approvers;
    this.directory =
      approvers === undefined
        ? options.db
          ? new PostgresApproverDirectory(options.db, {
              now: this.#now,
              onUnsealed: (entry) => this.#reportUnsealed(entry),
            })
          : new MemoryApproverDirectory([], { now: this.#now })
        : Array.isArray(approvers)
          ? new MemoryApproverDirectory(approvers as readonly ApproverInit[], { now: this.#now })
          : (approvers as ApproverDirectory);
    this.#operators = (options.operators ?? []).map((operator) => canonicalIdentity(operator));
    checkApproverLists(options);
    this.#atRest = new AtRestScrubber(options.audit?.scrubber, options.db);
  }

  /** The database this manager keeps its requests in, when it was given one (`db`). */
  get database(): Database | undefined {
    return this.#options.db;
  }

  /** The identity mode of the requests this manager opens. */
  get identityMode(): IdentityMode {
    return this.#options.identity ?? 'signed';
  }

  /** The deterministic id of the request for `subjectId` (a tool call id) in a thread. */
  static approvalId(threadId: string, subjectId: string, revision = 0): string {
    return deriveApprovalId(threadId, subjectId, revision);
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
    const current = await this.#clockNow();
    const now =
      options.openedAt && options.openedAt.getTime() < current.getTime()
        ? options.openedAt
        : current;
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
      proposers: uniqueIdentities([
        proposal.proposer,
        ...this.#operators,
        ...(options.proposers ?? []),
      ]),
      identityMode: this.identityMode,
      status: decision.route === 'auto' ? 'approved' : 'pending',
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + tiers[0]!.timeoutMs).toISOString(),
      ...(decision.route === 'auto' ? { decidedAt: now.toISOString() } : {}),
      decisions: [],
    };
    const atRest = await this.#atRest.request(created);
    const stored = await this.store.insertIfAbsent(atRest);
    // A secret scrubbed from the envelope at rest unbinds it from its hash: the log records the
    // digest of what was stored instead, so an inbox can still show it (see shownProposal).
    const shownDigest = storedEnvelope(atRest).digest;
    await this.#audit(stored, 'approval_requested', [stored.id], {
      approvalId: stored.id,
      proposalHash: stored.proposalHash,
      ...(shownDigest !== undefined && shownDigest !== atRest.proposalHash
        ? { shownProposalHash: shownDigest }
        : {}),
      route: stored.route,
      ruleId: stored.ruleId,
      reason: stored.reason,
      requiredApprovals: requiredApprovals(stored),
      expiresAt: stored.expiresAt,
      proposer: stored.proposer,
      proposers: stored.proposers,
      identityMode: stored.identityMode,
      ...(proposal.kind === 'tool'
        ? { toolName: proposal.toolName, toolCallId: proposal.toolCallId }
        : {}),
    });
    return stored;
  }

  /** The request with this id, with tier timeouts applied (and stored) as of now. */
  async get(id: string): Promise<ApprovalRequest | undefined> {
    const result = await this.store.update(id, (current, storeNow) => {
      const { request, changed } = advanceTiers(current, this.#at(storeNow));
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

  /**
   * Pending requests, oldest first; with `approver`, only those this identity may decide now
   * (not a proposer, allowed at the current tier — by id or by a directory role — not yet
   * decided, and whose stored proposal is bound to its hash: see {@link shownProposal}).
   * Show a request's arguments only through {@link shownProposal}.
   */
  async listPending(filter: PendingFilter = {}): Promise<ApprovalRequest[]> {
    await this.sweep();
    const pending = await this.store.listPending(filter.threadId);
    if (!filter.approver) return pending;
    const approver = tryIdentityKey(filter.approver);
    if (approver === undefined) return [];
    const who = {
      approver: filter.approver,
      roles: (await this.directory.get(filter.approver))?.roles ?? [],
    };
    const mayDecide = pending.filter(
      (request) =>
        ![request.proposer, ...request.proposers].some((p) => tryIdentityKey(p) === approver) &&
        mayDecideAt(request.tiers[request.tierIndex]!, who) &&
        !request.decisions.some((recorded) => tryIdentityKey(recorded.approver) === approver),
    );
    const bound: ApprovalRequest[] = [];
    for (const request of mayDecide) {
      if ((await this.shownProposal(request)).binding !== 'none') bound.push(request);
    }
    return bound;
  }

  /**
   * What may be shown of `request`'s proposal, and whether it may be decided where it is shown
   * (an inbox, the CLI): the stored envelope only when it hashes to `proposalHash` — or, when
   * secrets were scrubbed from it at rest, to the digest its hash-chained `approval_requested`
   * event recorded — and only the fields the hash covers. The row's `proposal` and `summary`
   * are an insider's to rewrite, while approvers sign the hash: a request bound to nothing is
   * `binding: 'none'`, written as a `security_event` (`proposal_tampered`), and shown and
   * decided nowhere (see {@link ShownProposal}).
   */
  async shownProposal(request: ApprovalRequest): Promise<ShownProposal> {
    const audit = this.#options.audit;
    const shown = await bindShownProposal(
      request,
      audit ? () => audit.events(request.threadId) : undefined,
    );
    if (shown.binding === 'none') {
      await audit?.append({
        threadId: request.threadId,
        runId: request.runId,
        eventId: deriveEventId(
          request.threadId,
          'security_event',
          'proposal_tampered',
          request.id,
          sha256Hex(JSON.stringify([request.proposalHash, request.proposal, request.summary])),
        ),
        type: 'security_event',
        payload: { kind: 'proposal_tampered', approvalId: request.id, message: shown.problem },
      });
    }
    return shown;
  }

  /**
   * {@link shownProposal}, refusing a request bound to nothing: what an inbox or the CLI calls
   * before it prepares or takes a decision on what it showed.
   * @throws VeridexError `proposal_tampered`.
   */
  async requireShownProposal(
    request: ApprovalRequest,
  ): Promise<Exclude<ShownProposal, { binding: 'none' }>> {
    const shown = await this.shownProposal(request);
    if (shown.binding === 'none') {
      throw new VeridexError(
        'proposal_tampered',
        `Approval ${request.id} cannot be shown or decided here: ${shown.problem}. Its row was edited outside the library; decide it where the agent runs (its interrupt carries the call as proposed) or open it again.`,
        { details: { approvalId: request.id } },
      );
    }
    return shown;
  }

  /**
   * Proves, before a call runs, that `request` really holds what its status claims, from the
   * recorded decisions alone: for `approved`, a quorum of decisions that re-verify (see
   * {@link proveQuorum}); for `edited`, the edit's own signed decision ({@link proveEdit}). The
   * tiers and proposers are derived from this manager's configuration and the live policy
   * decision, and bare names count only when this manager runs the `unverified` mode — so an
   * insider who edits the row's status, identity mode, tiers or decisions moves nothing.
   * A failed proof is written as a `security_event` (`approval_unproven`).
   */
  async prove(
    request: ApprovalRequest,
    proposal: Proposal,
    decision: EscalateDecision,
    options: { editors?: readonly string[] } = {},
  ): Promise<ApprovalProof> {
    const expected = {
      proposalHash: proposal.hash,
      tiers: this.#tiersFor(decision),
      proposers: uniqueIdentities([
        proposal.proposer,
        ...this.#operators,
        ...(options.editors ?? []),
      ]),
      identityMode: this.identityMode,
      maxClockSkewMs: this.#options.maxClockSkewMs ?? DEFAULT_CLOCK_SKEW_MS,
    };
    const logged = await this.#loggedFacts(request, expected.tiers[0]?.timeoutMs ?? 0);
    // Tiers open from when the request was opened: the later of the row's claim and what the
    // hash-chained approval_requested event recorded (an insider who backdates created_at and
    // expires_at opens no tier early).
    const opened = { ...request, createdAt: laterOf(request.createdAt, logged.openedAt) };
    const withLog = {
      ...expected,
      loggedTiers: logged.tiers,
      closesFrom: earlierOf(request.createdAt, logged.openedAt),
    };
    let proof =
      request.status === 'edited'
        ? await proveEdit(opened, withLog, this.directory)
        : await proveQuorum(opened, withLog, this.directory);
    if (proof.proven && logged.rejected) {
      proof = {
        proven: false,
        reason:
          'the audit log records a rejection of this request, which its row no longer shows (a rejection is final)',
      };
    } else if (proof.proven && logged.expired) {
      proof = {
        proven: false,
        reason:
          'the audit log records that this request expired, which its row no longer shows (an expiry is final)',
      };
    }
    if (!proof.proven) {
      await this.#options.audit?.append({
        threadId: request.threadId,
        runId: request.runId,
        eventId: deriveEventId(
          request.threadId,
          'security_event',
          'approval_unproven',
          request.id,
          request.status,
        ),
        type: 'security_event',
        payload: {
          kind: 'approval_unproven',
          approvalId: request.id,
          status: request.status,
          message: proof.reason,
        },
      });
    }
    return proof;
  }

  /**
   * What the hash-chained audit log says of `request`: whether it holds a rejection, and when
   * the request was opened. The row's decisions and times are claims an insider can edit; the
   * log is what they would have to rewrite (and re-chain, which earlier bundles and published
   * heads expose) to reopen a rejected call or open a tier early.
   */
  async #loggedFacts(
    request: ApprovalRequest,
    firstTierMs: number,
  ): Promise<{
    rejected: boolean;
    expired: boolean;
    openedAt?: string;
    tiers: Map<string, number>;
  }> {
    const tiers = new Map<string, number>();
    const audit = this.#options.audit;
    if (!audit) return { rejected: false, expired: false, tiers };
    let rejected = false;
    let expired = false;
    let openedAt: string | undefined;
    for (const event of await audit.events(request.threadId)) {
      if (event.payload.approvalId !== request.id) continue;
      if (event.type === 'approval_decided') {
        if (event.payload.decision === 'reject') rejected = true;
        const signature = (event.payload.signed as { signature?: unknown } | undefined)?.signature;
        const tier = event.payload.tier;
        if (typeof signature === 'string' && typeof tier === 'number' && !tiers.has(signature)) {
          tiers.set(signature, tier);
        }
      }
      if (event.type === 'approval_resolved' && event.payload.status === 'expired') expired = true;
      if (event.type === 'approval_requested' && openedAt === undefined) {
        // Its expiresAt was set by the same clock as the row's createdAt + the first tier.
        const expires = Date.parse(String(event.payload.expiresAt));
        const at = Number.isFinite(expires) ? expires - firstTierMs : Date.parse(event.timestamp);
        if (Number.isFinite(at)) openedAt = new Date(at).toISOString();
      }
    }
    return { rejected, expired, tiers, ...(openedAt ? { openedAt } : {}) };
  }

  /** Every request of a thread, oldest first (for evidence and UIs). */
  listByThread(threadId: string): Promise<ApprovalRequest[]> {
    return this.store.listByThread(threadId);
  }

  /**
   * Records one decision under a row lock and returns the updated request. The signature is
   * checked first (against the directory, outside the lock), then the statement's binding to
   * the request and every approver rule under the lock. The same signed decision sent twice —
   * a LangGraph replay, or the CLI and a resume — counts once.
   *
   * @throws VeridexError, each refusal also written as a `security_event` and nothing counted:
   *   `approval_not_found`, `resume_payload_invalid` (malformed), `decision_unsigned`,
   *   `decision_key_unknown`, `approver_unknown`, `decision_signature_invalid`,
   *   `decision_mismatch`, `decision_nonce_reused`, `decision_stale`, `identity_invalid`,
   *   `approval_already_decided`, `approval_expired`, `approver_not_allowed`,
   *   `approver_duplicate`, `proposer_cannot_approve`.
   */
  async decide(
    id: string,
    input: DecisionInput,
    options: {
      /**
       * The caller is the run that continues once this resolves (a resume payload applied in
       * the graph): the resolution is recorded resumed in the same write, so a resumer woken by
       * it does not run the thread a second time.
       */
      resumedInGraph?: boolean;
    } = {},
  ): Promise<ApprovalRequest> {
    let attempt: DecisionAttempt;
    try {
      attempt = await this.#authenticate(input);
    } catch (error) {
      if (!VeridexError.is(error)) throw error;
      if (['db_unavailable', 'db_query_failed', 'db_not_migrated'].includes(error.code))
        throw error;
      const current = await this.store.get(id);
      // A signed decision counted before is a replay (LangGraph re-running a resume), even if
      // its key was revoked since: answer with the request rather than a refusal.
      if (isSignedDecision(input) && typeof input.signature === 'string') {
        const decisionId = signedDecisionId(input.signature);
        if (current?.decisions.some((recorded) => recorded.decisionId === decisionId)) {
          return (await this.get(id))!;
        }
      }
      await this.#auditRefusal(current, id, input, error);
      throw error;
    }
    const rules = {
      maxClockSkewMs: this.#options.maxClockSkewMs ?? DEFAULT_CLOCK_SKEW_MS,
      identityMode: this.identityMode,
    };
    const outcome = await this.store.update(id, (current, storeNow) => {
      const transition = applyDecision(current, attempt, this.#at(storeNow), rules);
      return {
        next: transition.changed ? transition.request : undefined,
        result: transition,
        ...(options.resumedInGraph ? { resumedInGraph: true } : {}),
      };
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
    const pendingRequests = await this.store.listPending();
    if (pendingRequests.length === 0) return changed;
    // A first look with one clock reading; each request is judged again under its lock.
    const now = await this.#clockNow();
    for (const pending of pendingRequests) {
      if (now.getTime() < Date.parse(pending.expiresAt)) continue;
      const updated = await this.store.update(pending.id, (current, storeNow) => {
        const transition = advanceTiers(current, this.#at(storeNow));
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
      await this.#audit(
        request,
        'approval_decided',
        [request.id, recorded.decisionId],
        {
          approvalId: request.id,
          proposalHash: request.proposalHash,
          approver: recorded.approver,
          ...(recorded.approverName !== undefined ? { approverName: recorded.approverName } : {}),
          decision: recorded.decision,
          tier: recorded.tier,
          // Records written before signed decisions existed were never verified.
          verified: recorded.verified === true,
          ...(recorded.reason ? { reason: recorded.reason } : {}),
          ...(recorded.editedArgs ? { editedArgs: recorded.editedArgs } : {}),
        },
        recorded.signed ? { signed: recorded.signed } : undefined,
      );
    }
    await this.#auditResolution(request);
  }

  /** The time to judge by: the injected clock, else the store's (`storeNow`), else this process's. */
  #at(storeNow: Date | undefined): Date {
    return this.#options.now ? this.#options.now() : (storeNow ?? new Date());
  }

  /** {@link #at} when no row is locked: asks the store for its clock (one round trip). */
  async #clockNow(): Promise<Date> {
    if (this.#options.now || !this.store.clock) return this.#now();
    return this.store.clock();
  }

  /** Turns a decision as sent into an attempt: authenticated, or knowingly unverified. */
  async #authenticate(input: DecisionInput): Promise<DecisionAttempt> {
    // What is kept at rest (the approvals table, the audit log): registered secrets — this
    // process's and, loaded first, every other's — and pasted credentials removed from the
    // reason; a signed reason's hash still binds the original. Edits carrying a secret refused.
    const scrubber = await this.#atRest.ready();
    if (isSignedDecision(input)) {
      const { signed, approver, key } = await authenticateDecision(input, this.directory);
      if (signed.editedArgs) refuseSecretsInEdit(signed.editedArgs, scrubber);
      return {
        decisionId: signedDecisionId(signed.signature),
        decision: signed.statement.decision,
        approver: approver.id,
        approverName: approver.displayName,
        roles: approver.roles,
        ...(key.sponsor
          ? { sponsor: key.sponsor, sponsors: await sponsorChain(this.directory, key.sponsor) }
          : {}),
        ...(signed.reason !== undefined ? { reason: scrubber.scrubText(signed.reason) } : {}),
        ...(signed.editedArgs ? { editedArgs: signed.editedArgs } : {}),
        verified: true,
        signed: {
          statement: signed.statement,
          keyId: signed.keyId,
          signature: signed.signature,
          publicKey: key.publicKey,
          ...(key.type === 'webauthn' && signed.webauthn
            ? {
                webauthn: {
                  authenticatorData: signed.webauthn.authenticatorData,
                  clientDataJSON: signed.webauthn.clientDataJSON,
                  credentialId: key.credentialId,
                  rpId: key.rpId,
                  ...(key.origins ? { origins: key.origins } : {}),
                },
              }
            : {}),
        },
      };
    }
    const malformed = describeMalformedUnverified(input);
    if (malformed) {
      throw new VeridexError('resume_payload_invalid', `Malformed decision: ${malformed}.`);
    }
    if (input.editedArgs) refuseSecretsInEdit(input.editedArgs, scrubber);
    const approver = canonicalIdentity(input.approver);
    const known = await this.directory.get(approver);
    return {
      ...(input.decisionId !== undefined ? { decisionId: input.decisionId } : {}),
      decision: input.decision,
      approver,
      ...(known ? { approverName: known.displayName } : {}),
      roles: known?.roles ?? [],
      ...(input.reason !== undefined ? { reason: scrubber.scrubText(input.reason) } : {}),
      ...(input.editedArgs ? { editedArgs: input.editedArgs } : {}),
      verified: false,
    };
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
            approvers: this.#options.allow?.human_required ?? '*',
            requiredApprovals: 1,
            timeoutMs,
          },
        ];
      case 'dual_approval':
        return [
          {
            name: 'dual',
            approvers: this.#options.allow?.dual_approval ?? '*',
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
      tier: request.tierIndex,
      requiredApprovals: requiredApprovals(request),
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
    const claimed = claimedApprover(input);
    await audit.append({
      threadId: request.threadId,
      runId: request.runId,
      eventId: deriveEventId(
        request.threadId,
        'decision_refused',
        id,
        error.code,
        isSignedDecision(input)
          ? String(input.signature)
          : ((input as { decisionId?: string } | undefined)?.decisionId ?? claimed),
      ),
      type: 'security_event',
      payload: {
        kind: error.code,
        approvalId: id,
        approver: claimed,
        ...(isSignedDecision(input) ? { keyId: String(input.keyId).slice(0, 200) } : {}),
        message: error.message,
      },
    });
  }

  /**
   * A directory row without a valid seal was read (and ignored): someone wrote the approver
   * tables without the directory key. Recorded once per row and process on the directory's
   * audit thread; the write is not awaited because the lookup that saw it has already refused.
   */
  #reportUnsealed(entry: UnsealedEntry): void {
    const audit = this.#options.audit;
    const id = `${entry.approver}\n${entry.keyId ?? ''}`;
    if (!audit || this.#unsealedReported.has(id)) return;
    this.#unsealedReported.add(id);
    audit
      .append({
        threadId: DIRECTORY_AUDIT_THREAD,
        eventId: deriveEventId(
          DIRECTORY_AUDIT_THREAD,
          'directory_entry_unsealed',
          entry.approver,
          entry.keyId ?? '',
        ),
        type: 'security_event',
        payload: {
          kind: 'directory_entry_unsealed',
          approver: entry.approver,
          ...(entry.keyId ? { keyId: entry.keyId } : {}),
          ...(entry.reason ? { reason: entry.reason } : {}),
          message:
            entry.reason === 'predates_approver'
              ? `Key ${entry.keyId} was sealed for an earlier approver "${entry.approver}" (it was added before this approver entry was), so it is ignored.`
              : `The directory row for ${entry.keyId ? `key ${entry.keyId} of ` : ''}"${entry.approver}" is not sealed by the directory key, so it is ignored.`,
        },
      })
      .catch(() => this.#unsealedReported.delete(id));
  }

  async #audit(
    request: ApprovalRequest,
    type: 'approval_requested' | 'approval_decided' | 'approval_resolved',
    idParts: string[],
    payload: Record<string, unknown>,
    verbatim?: Record<string, unknown>,
  ) {
    await this.#options.audit?.append({
      threadId: request.threadId,
      runId: request.runId,
      eventId: deriveEventId(request.threadId, type, ...idParts),
      type,
      payload,
      ...(verbatim ? { verbatim } : {}),
    });
  }
}

/** The signature identifies a signed statement: the same one arriving twice counts once. */
function signedDecisionId(signature: string): string {
  return `dec_${sha256Hex(signature).slice(0, 32)}`;
}

/** Who a decision claims to be from, as sent (for refusals; never trusted). */
export function claimedApprover(input: unknown): string {
  if (isSignedDecision(input)) return String(input.statement.approver).slice(0, 256);
  const approver = (input as { approver?: unknown } | null | undefined)?.approver;
  return typeof approver === 'string' ? approver.slice(0, 256) : String(approver);
}

function uniqueIdentities(identities: readonly string[]): string[] {
  const byKey = new Map<string, string>();
  for (const identity of identities) {
    const canonical = canonicalIdentity(identity);
    const key = tryIdentityKey(canonical)!;
    if (!byKey.has(key)) byKey.set(key, canonical);
  }
  return [...byKey.values()];
}

/**
 * Every approver list the configuration names (`allow`, each pack tier) must name identities
 * that canonicalise: an entry that cannot be compared would match nobody — or, compared
 * carelessly, everybody whose role cannot be compared either. A typo here is a
 * `config_invalid`, not a tier nobody (or anybody) can decide.
 */
function checkApproverLists(options: ApprovalManagerOptions): void {
  checkPackShapes(options.packs ?? {});
  const lists: Array<[string, readonly string[] | '*' | undefined]> = [
    ['allow.human_required', options.allow?.human_required],
    ['allow.dual_approval', options.allow?.dual_approval],
    ...Object.entries(options.packs ?? {}).flatMap(([name, pack]) =>
      pack.tiers.map(
        (tier, index) =>
          [`packs.${name}.tiers[${index}]`, tier.approvers] as [string, readonly string[] | '*'],
      ),
    ),
  ];
  for (const [where, list] of lists) {
    if (list === undefined || list === '*') continue;
    for (const entry of list) {
      const name = entry.startsWith('role:') ? entry.slice('role:'.length) : entry;
      if (tryIdentityKey(name) === undefined) {
        throw new VeridexError(
          'config_invalid',
          `${where} names "${String(entry).slice(0, 80)}", which is not a valid approver id or role:<name>. Fix the entry (or use '*' for any registered approver).`,
        );
      }
    }
  }
}

/**
 * A pack from JavaScript or a JSON file may miss what the types require: a tier without a
 * timeout would open a request that never expires (or throw mid-run), one needing zero
 * approvals would pass unapproved. Refused when the manager is built.
 */
function checkPackShapes(packs: Record<string, ApprovalPack>): void {
  for (const [name, pack] of Object.entries(packs)) {
    const tiers = (pack as { tiers?: unknown })?.tiers;
    if (!Array.isArray(tiers) || tiers.length === 0) {
      throw new VeridexError('config_invalid', `packs.${name} needs a non-empty tiers array.`);
    }
    tiers.forEach((tier: Partial<ApprovalTier>, index) => {
      const where = `packs.${name}.tiers[${index}]`;
      if (!Number.isSafeInteger(tier?.timeoutMs) || (tier.timeoutMs as number) <= 0) {
        throw new VeridexError(
          'config_invalid',
          `${where}.timeoutMs must be a positive whole number of milliseconds (how long the tier waits before escalating).`,
        );
      }
      const required = tier.requiredApprovals;
      if (required !== undefined && (!Number.isSafeInteger(required) || required < 1)) {
        throw new VeridexError(
          'config_invalid',
          `${where}.requiredApprovals must be a whole number of at least 1.`,
        );
      }
      if (tier.approvers !== '*' && !Array.isArray(tier.approvers)) {
        throw new VeridexError(
          'config_invalid',
          `${where}.approvers must be a list of approver ids and role:<name> entries, or '*'.`,
        );
      }
    });
  }
}

/** The later of two ISO times (`b` may be missing). */
function laterOf(a: string, b: string | undefined): string {
  return b !== undefined && Date.parse(b) > Date.parse(a) ? b : a;
}

function earlierOf(a: string, b: string | undefined): string {
  return b !== undefined && Date.parse(b) < Date.parse(a) ? b : a;
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
