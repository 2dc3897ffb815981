import type { Database } from '../db/index.js';
import { LOCK_SCOPE, RECORD_USAGE, USAGE_SINCE } from './sql.js';

/** One request to consume budget. */
export interface UsageRequest {
  /** What is being counted, e.g. `fuel:thread:t1` or `rate:transfer`. */
  scope: string;
  /** The proposal's hash: consuming twice for the same proposal counts once. */
  proposalHash: string;
  cost: number;
  limit: number;
  /** Only usage at or after this time counts (rate-limit windows); default: all time. */
  since?: Date;
  now: Date;
}

/** The result of {@link UsageStore.consume}. */
export interface UsageResult {
  allowed: boolean;
  /** Usage before this proposal. */
  used: number;
}

/**
 * Budget and rate-limit accounting for policy rules. `consume` is atomic per scope: the check
 * and the record happen together, so concurrent callers cannot both take the last unit.
 */
export interface UsageStore {
  consume(request: UsageRequest): Promise<UsageResult>;
}

/** A {@link UsageStore} in process memory. */
export class MemoryUsageStore implements UsageStore {
  readonly #usage = new Map<string, Map<string, { cost: number; at: number }>>();

  async consume(request: UsageRequest): Promise<UsageResult> {
    let scope = this.#usage.get(request.scope);
    if (!scope) {
      scope = new Map();
      this.#usage.set(request.scope, scope);
    }
    const since = request.since?.getTime() ?? Number.NEGATIVE_INFINITY;
    let used = 0;
    for (const [hash, entry] of scope) {
      if (hash !== request.proposalHash && entry.at >= since) used += entry.cost;
    }
    const allowed = used + request.cost <= request.limit;
    if (allowed && !scope.has(request.proposalHash)) {
      scope.set(request.proposalHash, { cost: request.cost, at: request.now.getTime() });
    }
    return { allowed, used };
  }
}

/** A {@link UsageStore} in `veridex_policy_usage`, shared by every process on the database. */
export class PostgresUsageStore implements UsageStore {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  consume(request: UsageRequest): Promise<UsageResult> {
    return this.#db.transaction(async (tx) => {
      await tx.query(LOCK_SCOPE, [request.scope]);
      const { rows } = await tx.query<{ used: number }>(USAGE_SINCE, [
        request.scope,
        request.since ?? new Date(0),
        request.proposalHash,
      ]);
      const used = rows[0]!.used;
      const allowed = used + request.cost <= request.limit;
      if (allowed) {
        await tx.query(RECORD_USAGE, [
          request.scope,
          request.proposalHash,
          request.cost,
          request.now,
        ]);
      }
      return { allowed, used };
    });
  }
}
