import type { ApprovalDecisionRecord, ApprovalManager, ApprovalTier } from '../approvals/index.js';
import type { Database } from '../db/index.js';
import { FEED_SNAPSHOT } from './sql.js';

/** The live event kinds the service publishes (over SSE and to webhooks). */
export type InboxEventType = 'approval_requested' | 'approval_decided' | 'approval_expired';

/** One live event. `id` is deterministic, so every instance and every retry names it alike. */
export interface InboxEvent {
  id: string;
  type: InboxEventType;
  approvalId: string;
  threadId: string;
  /** The request's status after the event. */
  status: string;
  /** Approvals counted at the current tier, and how many are required. */
  approvals: number;
  requiredApprovals: number;
  /** For `approval_decided`: who decided what. */
  decision?: { approver: string; decision: string; decidedAt: string };
  /** When it happened (the request's time, the decision's, or the expiry). */
  at: string;
}

/** Called with each new event, in order. */
export type InboxListener = (event: InboxEvent) => void;

interface SnapshotRow {
  id: string;
  thread_id: string;
  status: string;
  tier_index: number;
  tiers: ApprovalTier[];
  decisions: ApprovalDecisionRecord[];
  created_at: Date;
  expires_at: Date;
  decided_at: Date | null;
}

interface Seen {
  status: string;
  decisions: Set<string>;
  settledAt?: number;
}

/** How long settled requests stay in the comparison window (covers clock skew between processes). */
const WINDOW_MS = 10 * 60 * 1000;
const RECENT_LIMIT = 500;

/**
 * The live view of approval requests: compares the `veridex_approvals` table between polls —
 * so requests opened and decided by other processes (the graph, the CLI, another service
 * instance) are seen too — and publishes what changed. Each poll first applies tier timeouts
 * (`ApprovalManager.sweep`), which is what turns a silent deadline into `approval_expired`.
 * Polls never overlap; the first one takes a baseline and publishes nothing.
 */
export class ApprovalFeed {
  readonly #db: Database;
  readonly #manager: ApprovalManager;
  readonly #now: () => Date;
  readonly #listeners = new Set<InboxListener>();
  readonly #seen = new Map<string, Seen>();
  readonly #recent: InboxEvent[] = [];
  #baseline = false;
  #running: Promise<void> = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;

  constructor(db: Database, manager: ApprovalManager, options: { now?: () => Date } = {}) {
    this.#db = db;
    this.#manager = manager;
    this.#now = options.now ?? (() => new Date());
  }

  /** Calls `listener` with every new event; returns the function that unsubscribes it. */
  subscribe(listener: InboxListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Events published after the one with id `lastId` (for SSE `Last-Event-ID`), oldest first. */
  since(lastId: string | undefined): InboxEvent[] {
    if (lastId === undefined) return [];
    const index = this.#recent.findIndex((event) => event.id === lastId);
    return index === -1 ? [] : this.#recent.slice(index + 1);
  }

  /** Polls every `intervalMs` until {@link stop}. The timer never keeps the process alive. */
  start(intervalMs: number): void {
    if (this.#timer) return;
    void this.poll().catch(() => undefined);
    this.#timer = setInterval(() => void this.poll().catch(() => undefined), intervalMs);
    this.#timer.unref();
  }

  /** Stops polling and waits for a poll in flight. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running.catch(() => undefined);
  }

  /** Compares the table with the last poll now and publishes what changed. */
  poll(): Promise<void> {
    const next = this.#running.catch(() => undefined).then(() => this.#poll());
    this.#running = next;
    return next;
  }

  async #poll(): Promise<void> {
    await this.#manager.sweep();
    const now = this.#now().getTime();
    const { rows } = await this.#db.query<SnapshotRow>(FEED_SNAPSHOT, [
      new Date(now - WINDOW_MS).toISOString(),
    ]);
    const events: InboxEvent[] = [];
    for (const row of rows) events.push(...this.#compare(row));
    for (const [id, seen] of this.#seen) {
      if (seen.settledAt !== undefined && seen.settledAt < now - 2 * WINDOW_MS)
        this.#seen.delete(id);
    }
    const publish = this.#baseline;
    this.#baseline = true;
    if (!publish) return;
    await this.#recordInAudit(events);
    events.sort((a, b) => a.at.localeCompare(b.at));
    for (const event of events) this.#publish(event);
  }

  /**
   * The deciding process commits a decision before it appends its audit events, so a poll can
   * see the decision first. A listener that reacts to an event by reading the thread's trace
   * must find the decision there: write any missing decision and resolution events (their ids
   * are deterministic, so the decider's own append still counts once) before publishing.
   */
  async #recordInAudit(events: readonly InboxEvent[]): Promise<void> {
    const settled = new Set(
      events.filter((event) => event.type !== 'approval_requested').map((e) => e.approvalId),
    );
    for (const id of settled) {
      try {
        const request = await this.#manager.store.get(id);
        if (request) await this.#manager.syncAudit(request);
      } catch {
        // The event is still worth publishing; the decider's own append (or its repair) follows.
      }
    }
  }

  #compare(row: SnapshotRow): InboxEvent[] {
    const previous = this.#seen.get(row.id);
    const required = row.tiers[row.tier_index]?.requiredApprovals ?? 1;
    const approvals = row.decisions.filter(
      (decision) => decision.decision === 'approve' && decision.tier === row.tier_index,
    ).length;
    const base = {
      approvalId: row.id,
      threadId: row.thread_id,
      status: row.status,
      approvals,
      requiredApprovals: required,
    };
    const events: InboxEvent[] = [];
    if (!previous) {
      events.push({
        ...base,
        id: `approval_requested:${row.id}`,
        type: 'approval_requested',
        at: row.created_at.toISOString(),
      });
    }
    for (const decision of row.decisions) {
      if (previous?.decisions.has(decision.decisionId)) continue;
      events.push({
        ...base,
        id: `approval_decided:${row.id}:${decision.decisionId}`,
        type: 'approval_decided',
        decision: {
          approver: decision.approver,
          decision: decision.decision,
          decidedAt: decision.decidedAt,
        },
        at: decision.decidedAt,
      });
    }
    if (row.status === 'expired' && previous?.status !== 'expired') {
      events.push({
        ...base,
        id: `approval_expired:${row.id}`,
        type: 'approval_expired',
        at: (row.decided_at ?? row.expires_at).toISOString(),
      });
    }
    this.#seen.set(row.id, {
      status: row.status,
      decisions: new Set(row.decisions.map((decision) => decision.decisionId)),
      ...(row.status !== 'pending' ? { settledAt: this.#now().getTime() } : {}),
    });
    return events;
  }

  #publish(event: InboxEvent): void {
    this.#recent.push(event);
    if (this.#recent.length > RECENT_LIMIT)
      this.#recent.splice(0, this.#recent.length - RECENT_LIMIT);
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch {}
    }
  }
}
