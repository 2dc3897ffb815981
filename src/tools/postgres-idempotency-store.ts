import type { Database, Queryable } from '../db/database.js';
import type {
  IdempotencyRecord,
  IdempotencyState,
  IdempotencyStore,
  InDoubtResolution,
  ReserveOptions,
  ReserveOutcome,
  StoredFailure,
} from './idempotency-store.js';
import { notHeld, notInDoubt } from './memory-idempotency-store.js';
import {
  GET_KEY,
  INSERT_RESERVATION,
  LOCK_KEY,
  MARK_EXPIRED_IN_DOUBT,
  RELEASE,
  RELEASE_IN_DOUBT,
  RESOLVE_IN_DOUBT,
  TAKE_OVER,
  TRANSITION,
} from './sql.js';
import { decodeStoredJson, encodeStoredJson } from './stored-json.js';

interface KeyRow {
  key: string;
  state: IdempotencyState;
  owner: string;
  tool_name: string;
  fingerprint: string | null;
  result: string | null;
  error: string | null;
  lease_ms: number | string;
  created_ms: number | string;
  updated_ms: number | string;
  expired?: boolean;
}

const HOLDING: IdempotencyState[] = ['reserved', 'executing', 'in_doubt'];

/**
 * An {@link IdempotencyStore} in `veridex_idempotency_keys` (PostgreSQL or PGlite; run
 * `migrate()` first). A fresh key costs one INSERT; contention is decided by the primary key
 * and a row lock, so of two processes reserving one key exactly one acquires it. Leases use the
 * database clock, so processes with skewed clocks agree on expiry. Results are stored as JSON
 * (bigint preserved).
 *
 * @example
 * const idempotency = new PostgresIdempotencyStore(db);
 * await runTool(transfer, args, { idempotency, threadId, toolCallId, proposalHash });
 */
export class PostgresIdempotencyStore implements IdempotencyStore {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async reserve(key: string, options: ReserveOptions): Promise<ReserveOutcome> {
    const params = [
      key,
      options.owner,
      options.toolName,
      options.leaseMs,
      options.fingerprint ?? null,
    ];
    const inserted = await this.#db.query<KeyRow>(INSERT_RESERVATION, params);
    if (inserted.rows[0]) return { status: 'acquired', record: toRecord(inserted.rows[0]) };
    return this.#db.transaction(async (tx) => {
      const row = await one(tx, LOCK_KEY, [key]);
      // Deleted between our INSERT and this lock (a release): try again from the top.
      if (row === undefined) return this.reserve(key, options);
      if (row.state === 'reserved' && row.expired) {
        return { status: 'acquired', record: toRecord((await one(tx, TAKE_OVER, params))!) };
      }
      if (row.state === 'executing' && row.expired) {
        return {
          status: 'in_doubt',
          record: toRecord((await one(tx, MARK_EXPIRED_IN_DOUBT, [key]))!),
        };
      }
      const record = toRecord(row);
      if (row.state === 'completed' || row.state === 'failed' || row.state === 'in_doubt') {
        return { status: row.state, record } as ReserveOutcome;
      }
      return { status: row.owner === options.owner ? 'acquired' : 'busy', record };
    });
  }

  async markExecuting(key: string, owner: string, leaseMs: number): Promise<void> {
    await this.#transition(key, owner, ['reserved', 'executing'], 'executing', null, null, leaseMs);
  }

  async commit(key: string, owner: string, result: unknown): Promise<void> {
    await this.#transition(key, owner, HOLDING, 'completed', encodeStoredJson(result), null, null);
  }

  async fail(key: string, owner: string, error: StoredFailure): Promise<void> {
    const stored = JSON.stringify({ code: error.code, message: error.message });
    await this.#transition(key, owner, HOLDING, 'failed', null, stored, null);
  }

  async markInDoubt(key: string, owner: string): Promise<void> {
    await this.#transition(key, owner, HOLDING, 'in_doubt', null, null, null);
  }

  async release(key: string, owner: string): Promise<void> {
    const { rows } = await this.#db.query(RELEASE, [key, owner, ['reserved', 'executing']]);
    if (rows.length === 0) throw notHeld(key, owner, await this.get(key));
  }

  async get(key: string): Promise<IdempotencyRecord | undefined> {
    const row = await one(this.#db, GET_KEY, [key]);
    return row && toRecord(row);
  }

  async resolve(
    key: string,
    resolution: InDoubtResolution,
  ): Promise<IdempotencyRecord | undefined> {
    if (resolution.state === 'released') {
      const { rows } = await this.#db.query(RELEASE_IN_DOUBT, [key]);
      if (rows.length === 0) throw notInDoubt(key, (await this.get(key))?.state);
      return undefined;
    }
    const params =
      resolution.state === 'completed'
        ? [key, 'completed', encodeStoredJson(resolution.result), null]
        : [
            key,
            'failed',
            null,
            JSON.stringify({ code: resolution.error.code, message: resolution.error.message }),
          ];
    const row = await one(this.#db, RESOLVE_IN_DOUBT, params);
    if (row === undefined) throw notInDoubt(key, (await this.get(key))?.state);
    return toRecord(row);
  }

  async #transition(
    key: string,
    owner: string,
    from: IdempotencyState[],
    to: IdempotencyState,
    result: string | null,
    error: string | null,
    leaseMs: number | null,
  ): Promise<void> {
    const { rows } = await this.#db.query(TRANSITION, [
      key,
      owner,
      from,
      to,
      result,
      error,
      leaseMs,
    ]);
    if (rows.length === 0) throw notHeld(key, owner, await this.get(key));
  }
}

async function one(db: Queryable, sql: string, params: unknown[]): Promise<KeyRow | undefined> {
  return (await db.query<KeyRow>(sql, params)).rows[0];
}

function toRecord(row: KeyRow): IdempotencyRecord {
  return {
    key: row.key,
    state: row.state,
    owner: row.owner,
    toolName: row.tool_name,
    ...(row.fingerprint === null ? {} : { fingerprint: row.fingerprint }),
    leaseExpiresAt: new Date(Number(row.lease_ms)),
    ...(row.result === null ? {} : { result: decodeStoredJson(row.result) }),
    ...(row.error === null ? {} : { error: JSON.parse(row.error) as StoredFailure }),
    createdAt: new Date(Number(row.created_ms)),
    updatedAt: new Date(Number(row.updated_ms)),
  };
}
