import { randomUUID } from 'node:crypto';
import type { AuditStore, ChainableEvent } from './audit-store.js';
import { MemoryAuditStore } from './memory-audit-store.js';
import { SecretScrubber } from './secret-scrubber.js';
import {
  type EventPayload,
  hashTraceEvent,
  type TraceEvent,
  type TraceEventType,
} from './trace-event.js';
import { type ChainVerification, verifyChain } from './verify-chain.js';

/** One event to append. Chain fields (`previousEventHash`, `hash`) are filled in by the log. */
export interface AppendEventInput {
  threadId: string;
  type: TraceEventType;
  payload: EventPayload;
  /**
   * Deterministic id (see `deriveEventId`). Re-appending the same id is a no-op, which is
   * what makes appends from re-run LangGraph nodes safe. Default: a random UUID (not replay-safe).
   */
  eventId?: string;
  /** Default: the thread id. */
  runId?: string;
  /** Default: 0. */
  turnIndex?: number;
}

/** Options for {@link AuditLog}. */
export interface AuditLogOptions {
  /** Default: a {@link MemoryAuditStore}. Use `PostgresAuditStore` to persist. */
  store?: AuditStore;
  /** Default: a fresh {@link SecretScrubber}; share one with the `SecretsProvider`. */
  scrubber?: SecretScrubber;
  /** Default: the system clock. */
  now?: () => Date;
}

/**
 * The append-only, per-thread hash-chained event log. Payloads pass the secret scrubber
 * before they are hashed and stored, so a secret never reaches the log.
 *
 * @example
 * const audit = new AuditLog({ store: new PostgresAuditStore(db) });
 * await audit.append({ threadId, type: 'run_started', payload: {}, eventId: deriveEventId(threadId, 'run_started') });
 * (await audit.verify(threadId)).valid // true
 */
export class AuditLog {
  readonly store: AuditStore;
  readonly scrubber: SecretScrubber;
  readonly #now: () => Date;

  constructor(options: AuditLogOptions = {}) {
    this.store = options.store ?? new MemoryAuditStore();
    this.scrubber = options.scrubber ?? new SecretScrubber();
    this.#now = options.now ?? (() => new Date());
  }

  /** Appends one event and returns it as stored (the earlier one if its id was already there). */
  async append(input: AppendEventInput): Promise<TraceEvent> {
    const [event] = await this.appendMany([input]);
    return event!;
  }

  /**
   * Appends several events atomically, in order. All must belong to one thread.
   * @throws Error if the inputs span more than one thread.
   */
  async appendMany(inputs: readonly AppendEventInput[]): Promise<TraceEvent[]> {
    const threadId = inputs[0]?.threadId;
    if (threadId === undefined) return [];
    const timestamp = this.#now().toISOString();
    const drafts: ChainableEvent[] = inputs.map((input) => {
      if (input.threadId !== threadId) {
        throw new Error('AuditLog.appendMany: all events of one call must belong to one thread.');
      }
      return {
        eventId: input.eventId ?? randomUUID(),
        threadId,
        runId: input.runId ?? threadId,
        turnIndex: input.turnIndex ?? 0,
        type: input.type,
        timestamp,
        payload: this.scrubber.scrub(input.payload),
      };
    });
    return this.store.append(threadId, drafts, hashTraceEvent);
  }

  /** The thread's events in chain order. */
  events(threadId: string): Promise<TraceEvent[]> {
    return this.store.list(threadId);
  }

  /** Recomputes the thread's chain and reports the first broken link. */
  async verify(threadId: string): Promise<ChainVerification> {
    return verifyChain(await this.store.list(threadId));
  }
}
