import type { Database } from '../db/database.js';
import {
  type CeilingReservation,
  type CeilingScope,
  type CeilingState,
  type CeilingStore,
  type CeilingUsage,
  checkLimits,
  ledgerConflict,
  type ReserveCeilingOutcome,
  type ReserveCeilingRequest,
  termsConflict,
} from './ceiling-store.js';
import { addMoney } from './money.js';
import {
  GET_TRANSFER,
  LOCK_CEILING,
  MOVE,
  READ_FOR_RESERVE,
  UPSERT_RESERVATION,
  USAGE,
} from './sql.js';
import type { TransferReceipt } from './types.js';

interface TransferRow {
  idempotency_key: string;
  app_id: string;
  agent_id: string;
  currency: string;
  decimals: number;
  amount: string;
  counterparty: string;
  memo: string | null;
  thread_id: string;
  run_id: string;
  tool_call_id: string;
  proposal_hash: string;
  state: CeilingState;
  attempt: number;
  receipt: TransferReceipt | null;
  reserved_ms: number | string;
  updated_ms: number | string;
}

/**
 * A {@link CeilingStore} in `veridex_treasury_transfers` (PostgreSQL or PGlite; run
 * `migrate()` first). A reservation is one transaction: lock the app/agent/currency row,
 * sum the rolling window, insert — so concurrent reservations from separate connections and
 * processes are serialised and never overshoot a limit together. Every other step is a
 * single statement. Amounts are `numeric` minor units.
 *
 * @example createTreasuryKit({ ..., ceilings: new PostgresCeilingStore(db) })
 */
export class PostgresCeilingStore implements CeilingStore {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  reserve(request: ReserveCeilingRequest): Promise<ReserveCeilingOutcome> {
    const { limits, now, ...terms } = request;
    const key = terms.idempotencyKey;
    const since = new Date(now.getTime() - limits.windowMs);
    return this.#db.transaction(async (tx) => {
      await tx.query(LOCK_CEILING, [terms.appId, terms.agentId, terms.currency]);
      const { rows } = await tx.query<{ spent: string; existing: TransferRow | null }>(
        READ_FOR_RESERVE,
        [key, terms.appId, terms.agentId, terms.currency, since],
      );
      const spent = { ...terms.amount, amount: BigInt(rows[0]!.spent) };
      const existing = rows[0]!.existing ? toReservation(rows[0]!.existing) : undefined;
      if (existing && existing.amount.amount !== terms.amount.amount) {
        throw termsConflict(key, existing, terms.amount);
      }
      if (existing && existing.state !== 'released') {
        return {
          reservation: existing,
          fresh: false,
          windowTotal: addMoney(spent, existing.amount),
        };
      }
      const windowTotal = checkLimits(terms.amount, spent, limits);
      const inserted = await tx.query<TransferRow>(UPSERT_RESERVATION, [
        key,
        terms.appId,
        terms.agentId,
        terms.currency,
        terms.amount.decimals,
        terms.amount.amount.toString(),
        terms.counterparty,
        terms.memo ?? null,
        terms.threadId,
        terms.runId,
        terms.toolCallId,
        terms.proposalHash,
        now,
      ]);
      return { reservation: toReservation(inserted.rows[0]!), fresh: true, windowTotal };
    });
  }

  markExecuting(key: string, now: Date): Promise<CeilingReservation> {
    return this.#move(key, ['reserved', 'executing'], 'executing', 'mark executing', now);
  }

  async commit(key: string, receipt: TransferReceipt, now: Date): Promise<CeilingReservation> {
    const { rows } = await this.#db.query<TransferRow>(MOVE, [
      key,
      ['reserved', 'executing'],
      'committed',
      now,
      JSON.stringify(receipt),
    ]);
    if (rows[0]) return toReservation(rows[0]);
    const current = await this.get(key);
    if (current?.state === 'committed') return current;
    throw ledgerConflict(key, 'commit', current?.state);
  }

  async release(key: string, now: Date): Promise<CeilingReservation | undefined> {
    const params = [key, ['reserved', 'executing'], 'released', now, null];
    const { rows } = await this.#db.query<TransferRow>(MOVE, params);
    return rows[0] && toReservation(rows[0]);
  }

  async get(key: string): Promise<CeilingReservation | undefined> {
    const { rows } = await this.#db.query<TransferRow>(GET_TRANSFER, [key]);
    return rows[0] && toReservation(rows[0]);
  }

  async usage(scope: CeilingScope & { decimals: number }, since: Date): Promise<CeilingUsage> {
    const { rows } = await this.#db.query<{ committed: string; pending: string }>(USAGE, [
      scope.appId,
      scope.agentId,
      scope.currency,
      since,
    ]);
    const money = (amount: string) => ({
      amount: BigInt(amount),
      currency: scope.currency,
      decimals: scope.decimals,
    });
    return { committed: money(rows[0]!.committed), pending: money(rows[0]!.pending) };
  }

  async #move(
    key: string,
    from: CeilingState[],
    to: CeilingState,
    wanted: string,
    now: Date,
  ): Promise<CeilingReservation> {
    const { rows } = await this.#db.query<TransferRow>(MOVE, [key, from, to, now, null]);
    if (rows[0]) return toReservation(rows[0]);
    throw ledgerConflict(key, wanted, (await this.get(key))?.state);
  }
}

function toReservation(row: TransferRow): CeilingReservation {
  return {
    idempotencyKey: row.idempotency_key,
    appId: row.app_id,
    agentId: row.agent_id,
    currency: row.currency,
    amount: { amount: BigInt(row.amount), currency: row.currency, decimals: Number(row.decimals) },
    counterparty: row.counterparty,
    ...(row.memo === null ? {} : { memo: row.memo }),
    threadId: row.thread_id,
    runId: row.run_id,
    toolCallId: row.tool_call_id,
    proposalHash: row.proposal_hash,
    state: row.state,
    attempt: Number(row.attempt),
    ...(row.receipt ? { receipt: row.receipt } : {}),
    reservedAt: new Date(Number(row.reserved_ms)),
    updatedAt: new Date(Number(row.updated_ms)),
  };
}
