import { VeridexError } from '../errors/index.js';
import { formatMoney } from './format-money.js';
import { addMoney, compareMoney, type Money, subtractMoney } from './money.js';
import type { TransferReceipt } from './types.js';

/**
 * Where one transfer's reservation stands:
 * - `reserved`: counted against the limits; the executor has not been called.
 * - `executing`: recorded just before the executor is called; after a crash nobody knows
 *   whether the money moved (the kit asks `executor.lookup`, or escalates).
 * - `committed`: the executor returned a receipt; the spend is final.
 * - `released`: nothing was spent (screening, balance or time-lock failed, the rail refused,
 *   or reconciliation found no transfer). A later retry of the same key reserves again.
 */
export type CeilingState = 'reserved' | 'executing' | 'committed' | 'released';

/** Limits are kept per application, agent and currency. */
export interface CeilingScope {
  appId: string;
  agentId: string;
  currency: string;
}

/** One transfer's ledger row: its reservation against the ceilings, and its receipt once executed. */
export interface CeilingReservation extends CeilingScope {
  /** The transfer's idempotency key (one reservation per key). */
  idempotencyKey: string;
  amount: Money;
  /** The counterparty as given to the transfer tool. */
  counterparty: string;
  memo?: string;
  threadId: string;
  runId: string;
  toolCallId: string;
  proposalHash: string;
  state: CeilingState;
  /** 1 for the first reservation of the key, +1 each time a released key is reserved again. */
  attempt: number;
  /** Present when `committed`. */
  receipt?: TransferReceipt;
  /** When the current attempt was reserved: the spend counts in the rolling window from then. */
  reservedAt: Date;
  updatedAt: Date;
}

/** The limits one reservation is checked against. */
export interface CeilingLimits {
  perTransactionMax?: Money;
  /** Total of the rolling window (committed plus reserved), including this transfer. */
  dailyLimit?: Money;
  /** Length of the rolling window (default 24 h). */
  windowMs: number;
}

/** Input of {@link CeilingStore.reserve}. */
export type ReserveCeilingRequest = Omit<
  CeilingReservation,
  'state' | 'attempt' | 'receipt' | 'reservedAt' | 'updatedAt'
> & { limits: CeilingLimits; now: Date };

/** What {@link CeilingStore.reserve} did. */
export interface ReserveCeilingOutcome {
  reservation: CeilingReservation;
  /** False when the key already held a live (or committed) reservation, returned unchanged. */
  fresh: boolean;
  /** Total of the window after this reservation (committed plus reserved). */
  windowTotal: Money;
}

/** Spend in the rolling window. */
export interface CeilingUsage {
  committed: Money;
  /** Reserved or executing, not yet committed. */
  pending: Money;
}

/**
 * The ceiling ledger: reserve before execution, mark executing just before the executor is
 * called, commit with the receipt, release on failure. Implementations:
 * `MemoryCeilingStore` (one process) and `PostgresCeilingStore` (a row lock per app, agent
 * and currency serialises reservations, so concurrent transfers from any number of
 * processes never overshoot a limit).
 */
export interface CeilingStore {
  /**
   * Reserves `amount` for the key, or returns the key's existing live or committed
   * reservation unchanged (re-runs are free). A released key is reserved again (`attempt`+1).
   * @throws VeridexError `ceiling_exceeded` when the amount is above the per-transaction
   *   maximum or the window total would exceed the daily limit; `idempotency_conflict` when
   *   the key is reserved for another amount or currency.
   */
  reserve(request: ReserveCeilingRequest): Promise<ReserveCeilingOutcome>;
  /** `reserved` → `executing`. @throws VeridexError `idempotency_conflict` if not reserved. */
  markExecuting(key: string, now: Date): Promise<CeilingReservation>;
  /**
   * `reserved`/`executing` → `committed` with the receipt (idempotent for a committed key).
   * @throws VeridexError `idempotency_conflict` for a released or unknown key.
   */
  commit(key: string, receipt: TransferReceipt, now: Date): Promise<CeilingReservation>;
  /** `reserved`/`executing` → `released`; a no-op (undefined) in any other state. */
  release(key: string, now: Date): Promise<CeilingReservation | undefined>;
  get(key: string): Promise<CeilingReservation | undefined>;
  /** Committed and pending spend of `scope` reserved after `since`. */
  usage(scope: CeilingScope & { decimals: number }, since: Date): Promise<CeilingUsage>;
}

/**
 * Checks one reservation against its limits, given what the window already holds.
 * @throws VeridexError `ceiling_exceeded` with the limit, the spend and what is left.
 */
export function checkLimits(amount: Money, windowSpent: Money, limits: CeilingLimits): Money {
  const max = limits.perTransactionMax;
  if (max && compareMoney(amount, max) > 0) {
    throw new VeridexError(
      'ceiling_exceeded',
      `Transfer of ${formatMoney(amount, { withCurrency: true })} is above the per-transaction maximum of ${formatMoney(max, { withCurrency: true })}. Split it only if your treasury policy allows; otherwise ask an operator to raise the limit.`,
      {
        details: {
          limit: 'per_transaction',
          currency: amount.currency,
          requested: formatMoney(amount),
          maximum: formatMoney(max),
        },
      },
    );
  }
  const total = addMoney(windowSpent, amount);
  const daily = limits.dailyLimit;
  if (daily && compareMoney(total, daily) > 0) {
    const left = subtractMoney(daily, windowSpent);
    const remaining = left.amount < 0n ? { ...left, amount: 0n } : left;
    throw new VeridexError(
      'ceiling_exceeded',
      `Transfer of ${formatMoney(amount, { withCurrency: true })} would exceed the rolling ${hours(limits.windowMs)} limit of ${formatMoney(daily, { withCurrency: true })}: ${formatMoney(windowSpent)} is already spent or reserved, ${formatMoney(remaining)} remains. Try a smaller amount or later.`,
      {
        details: {
          limit: 'daily',
          currency: amount.currency,
          requested: formatMoney(amount),
          spent: formatMoney(windowSpent),
          limitAmount: formatMoney(daily),
          remaining: formatMoney(remaining),
        },
      },
    );
  }
  return total;
}

/** `idempotency_conflict` for a state change the key's record does not allow. */
export function ledgerConflict(key: string, wanted: string, state: CeilingState | undefined) {
  return new VeridexError(
    'idempotency_conflict',
    `Cannot ${wanted} the ceiling reservation of ${key}: it is ${state ?? 'unknown'}. Another execution or a reconciliation settled it; do not repeat the transfer.`,
    { details: { key, state } },
  );
}

/** `idempotency_conflict` for a key reused with other transfer terms. */
export function termsConflict(key: string, existing: CeilingReservation, amount: Money) {
  return new VeridexError(
    'idempotency_conflict',
    `Idempotency key ${key} already reserves ${formatMoney(existing.amount, { withCurrency: true })}, not ${formatMoney(amount, { withCurrency: true })}; a key identifies exactly one transfer.`,
    { details: { key } },
  );
}

function hours(ms: number): string {
  return ms % 3_600_000 === 0 ? `${ms / 3_600_000}-hour` : `${ms} ms`;
}
