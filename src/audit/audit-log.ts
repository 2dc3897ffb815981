import { randomUUID } from 'node:crypto';
import type { AuditStore, ChainableEvent } from './audit-store.js';
import { isDigest } from './digest-fields.js';
import type { HeadWitness } from './head-witness.js';
import { MemoryAuditStore } from './memory-audit-store.js';
import { PostgresAuditStore } from './postgres-audit-store.js';
import { PostgresTreeHeadStore } from './postgres-tree-head-store.js';
import { SecretFingerprintStore } from './secret-fingerprint-store.js';
import { type AttachOptions, SecretScrubber } from './secret-scrubber.js';
import {
  type EventPayload,
  hashTraceEvent,
  type TraceEvent,
  type TraceEventType,
} from './trace-event.js';
import { MemoryTreeHeadStore, type TreeHeadStore } from './tree-head-store.js';
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
  /**
   * Payload fields stored exactly as given, merged over the scrubbed `payload`: signed material
   * (decision statements, signatures, public keys) whose bytes must not change, or its
   * signature would no longer verify. Only fixed-format values that cannot hold a secret belong here.
   */
  verbatim?: EventPayload;
  /**
   * Top-level `payload` fields holding digests the library computed (see `verbatimDigests`):
   * kept as given when they have a digest's shape, scrubbed like the rest otherwise.
   */
  digests?: readonly string[];
}

/**
 * Told about every append, after the store accepted it (e.g. to export spans). An event id
 * appended again (a re-run node) reaches listeners again: deduplicate by `eventId`.
 */
export type AuditListener = (events: readonly TraceEvent[]) => void;

/** Options for {@link AuditLog}. */
export interface AuditLogOptions {
  /** Default: a {@link MemoryAuditStore}. Use `PostgresAuditStore` to persist. */
  store?: AuditStore;
  /** Default: a fresh {@link SecretScrubber}; share one with the `SecretsProvider`. */
  scrubber?: SecretScrubber;
  /**
   * Where registered secrets are shared with other processes (as fingerprints, never values).
   * Default: the store's database when the store is a `PostgresAuditStore` — so a CLI or a
   * service opened on the same database scrubs the secrets an agent process registered.
   * Pass options to allow weak secrets in this process only (`{ weakSecrets: 'process-only' }`),
   * or `false` to share nothing (each process then scrubs only what it registered itself).
   */
  secretFingerprints?: SecretFingerprintStore | AttachOptions | false;
  /**
   * Where the signed tree heads of this log are kept (every sealed bundle's head, and the heads
   * a `TransparencyLog` signs). Default: the store's database when the store is a
   * `PostgresAuditStore`, else memory.
   */
  heads?: TreeHeadStore;
  /**
   * Where every head signed for this log is published, e.g. a `FileHeadWitness` whose file is
   * shipped off the host. Default: none (heads stay in the database, and in the bundles).
   */
  witnesses?: readonly HeadWitness[];
  /** Default: the system clock. */
  now?: () => Date;
}

/**
 * The append-only, per-thread hash-chained event log. Payloads pass the secret scrubber
 * before they are hashed and stored, so a secret never reaches the log — also a secret that
 * another process registered, when the log is over a database (see `secretFingerprints`).
 *
 * @example
 * const audit = new AuditLog({ store: new PostgresAuditStore(db) });
 * await audit.append({ threadId, type: 'run_started', payload: {}, eventId: deriveEventId(threadId, 'run_started') });
 * (await audit.verify(threadId)).valid // true
 */
export class AuditLog {
  readonly store: AuditStore;
  readonly scrubber: SecretScrubber;
  /** The log's signed tree heads. */
  readonly heads: TreeHeadStore;
  /** Where new heads are published. */
  readonly witnesses: readonly HeadWitness[];
  readonly #now: () => Date;
  readonly #listeners = new Set<AuditListener>();

  constructor(options: AuditLogOptions = {}) {
    this.store = options.store ?? new MemoryAuditStore();
    this.scrubber = options.scrubber ?? new SecretScrubber();
    this.#now = options.now ?? (() => new Date());
    this.heads =
      options.heads ??
      (this.store instanceof PostgresAuditStore
        ? new PostgresTreeHeadStore(this.store.database)
        : new MemoryTreeHeadStore());
    this.witnesses = [...(options.witnesses ?? [])];
    const shared = options.secretFingerprints;
    if (shared !== false) {
      const store =
        shared instanceof SecretFingerprintStore
          ? shared
          : this.store instanceof PostgresAuditStore
            ? SecretFingerprintStore.for(this.store.database)
            : undefined;
      if (store) {
        this.scrubber.attach(store, shared instanceof SecretFingerprintStore ? {} : (shared ?? {}));
      }
    }
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
    // Secrets registered by other processes on this database, and ours for them.
    if (this.scrubber.shared) await this.scrubber.refresh();
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
        payload: this.#scrubPayload(input),
      };
    });
    const stored = await this.store.append(threadId, drafts, hashTraceEvent);
    // Observers never break the record: a throwing listener is ignored.
    for (const listener of this.#listeners) {
      try {
        listener(stored);
      } catch {}
    }
    return stored;
  }

  // The payload as stored: a scrubbed copy, with the digests and verbatim fields as given. The
  // copy is built key by key (a merged spread would be an object V8 reads several times slower
  // when hashing it).
  #scrubPayload({ payload, digests, verbatim }: AppendEventInput): EventPayload {
    let stored: EventPayload;
    if (digests === undefined || digests.length === 0) stored = this.scrubber.scrub(payload);
    else {
      stored = {};
      for (const key of Object.keys(payload)) {
        const value = payload[key];
        if (digests.includes(key) && isDigest(value)) stored[key] = value;
        else stored[this.scrubber.scrubText(key)] = this.scrubber.scrub(value);
      }
    }
    return verbatim ? Object.assign(stored, verbatim) : stored;
  }

  /** Calls `listener` after every append; returns the function that unsubscribes it. */
  subscribe(listener: AuditListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
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
