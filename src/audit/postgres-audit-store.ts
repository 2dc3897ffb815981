import { type Database, isUniqueViolation } from '../db/index.js';
import type { AuditStore, ChainableEvent } from './audit-store.js';
import { canonicalJson } from './canonical-json.js';
import {
  INSERT_EVENTS_AND_MOVE_HEAD,
  LIST_EVENTS,
  LIST_THREADS,
  LOCK_HEAD_AND_FIND_EXISTING,
} from './sql.js';
import {
  GENESIS_HASH,
  linkEvent,
  type TraceEvent,
  type TraceEventType,
  type UnhashedTraceEvent,
} from './trace-event.js';

interface StoredEventJson {
  eventId: string;
  runId: string;
  turnIndex: number;
  type: TraceEventType;
  timestamp: string;
  payload: string;
  previousEventHash: string;
  hash: string;
}

interface EventRow {
  event_id: string;
  run_id: string;
  turn_index: number;
  type: TraceEventType;
  timestamp: string;
  payload: string;
  previous_hash: string;
  hash: string;
}

/**
 * An {@link AuditStore} in `veridex_audit_events` (PostgreSQL or PGlite; run `migrate()` first).
 * Appends lock the thread's head row, so appends from many processes to one thread
 * are serialised and the chain never forks. Two round trips per batch inside one transaction.
 */
export class PostgresAuditStore implements AuditStore {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  /** The database the events live in. */
  get database(): Database {
    return this.#db;
  }

  async append(
    threadId: string,
    events: readonly ChainableEvent[],
    hash: (event: UnhashedTraceEvent) => string,
  ): Promise<TraceEvent[]> {
    // Two processes appending the same replay-safe event to a new thread at once: the second
    // waits on the head row, but its statement's snapshot predates the first's commit, so it
    // does not see the event and its insert hits the unique key. Run it again: the first has
    // committed by then, the event is found, and the append is the no-op it should be.
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#appendOnce(threadId, events, hash);
      } catch (error) {
        if (!isUniqueViolation(error) || attempt >= 3) throw error;
      }
    }
  }

  #appendOnce(
    threadId: string,
    events: readonly ChainableEvent[],
    hash: (event: UnhashedTraceEvent) => string,
  ): Promise<TraceEvent[]> {
    return this.#db.transaction(async (tx) => {
      const ids = events.map((event) => event.eventId);
      const { rows } = await tx.query<{ seq: string; hash: string; existing: StoredEventJson[] }>(
        LOCK_HEAD_AND_FIND_EXISTING,
        [threadId, ids, GENESIS_HASH],
      );
      const head = rows[0]!;
      const known = new Map<string, TraceEvent>(
        head.existing.map((row) => [
          row.eventId,
          { ...row, threadId, payload: JSON.parse(row.payload) },
        ]),
      );
      let seq = BigInt(head.seq);
      let previousEventHash = head.hash;
      const fresh: Array<{ event: TraceEvent; seq: bigint; payloadJson: string }> = [];
      const result: TraceEvent[] = [];
      for (const draft of events) {
        const existing = known.get(draft.eventId);
        if (existing) {
          result.push(existing);
          continue;
        }
        const event = linkEvent(draft, threadId, previousEventHash, hash);
        seq += 1n;
        previousEventHash = event.hash;
        fresh.push({ event, seq, payloadJson: canonicalJson(event.payload) });
        known.set(event.eventId, event);
        result.push(event);
      }
      if (fresh.length > 0) {
        await tx.query(INSERT_EVENTS_AND_MOVE_HEAD, [
          threadId,
          fresh.map(({ seq }) => seq.toString()),
          fresh.map(({ event }) => event.eventId),
          fresh.map(({ event }) => event.runId),
          fresh.map(({ event }) => event.turnIndex),
          fresh.map(({ event }) => event.type),
          fresh.map(({ event }) => event.timestamp),
          fresh.map(({ payloadJson }) => payloadJson),
          fresh.map(({ event }) => event.previousEventHash),
          fresh.map(({ event }) => event.hash),
          seq.toString(),
          previousEventHash,
        ]);
      }
      return result;
    });
  }

  async list(threadId: string): Promise<TraceEvent[]> {
    const { rows } = await this.#db.query<EventRow>(LIST_EVENTS, [threadId]);
    return rows.map((row) => ({
      eventId: row.event_id,
      threadId,
      runId: row.run_id,
      turnIndex: row.turn_index,
      type: row.type,
      timestamp: row.timestamp,
      payload: JSON.parse(row.payload),
      previousEventHash: row.previous_hash,
      hash: row.hash,
    }));
  }

  async threads(): Promise<Array<{ threadId: string; length: number }>> {
    const { rows } = await this.#db.query<{ thread_id: string; seq: string }>(LIST_THREADS);
    return rows
      .filter((row) => row.seq !== '0')
      .map((row) => ({ threadId: row.thread_id, length: Number(row.seq) }));
  }
}
