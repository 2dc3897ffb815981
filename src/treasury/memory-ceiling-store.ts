import {
  type CeilingReservation,
  type CeilingScope,
  type CeilingStore,
  type CeilingUsage,
  checkLimits,
  ledgerConflict,
  type ReserveCeilingOutcome,
  type ReserveCeilingRequest,
  termsConflict,
} from './ceiling-store.js';
import { addMoney, type Money, zeroMoney } from './money.js';
import type { TransferReceipt } from './types.js';

/**
 * A {@link CeilingStore} in process memory: for tests and single-process quick starts. Each
 * reservation is checked and recorded without yielding, so concurrent transfers in one
 * process cannot overshoot a limit. Nothing survives a restart: use `PostgresCeilingStore`
 * for crash safety.
 *
 * @example createTreasuryKit({ ..., ceilings: new MemoryCeilingStore() })
 */
export class MemoryCeilingStore implements CeilingStore {
  readonly #records = new Map<string, CeilingReservation>();

  async reserve(request: ReserveCeilingRequest): Promise<ReserveCeilingOutcome> {
    const { limits, now, ...terms } = request;
    const existing = this.#records.get(terms.idempotencyKey);
    const since = new Date(now.getTime() - limits.windowMs);
    const spent = this.#windowTotal(terms, terms.amount.decimals, since, terms.idempotencyKey);
    if (existing && !sameTerms(existing, terms.amount)) {
      throw termsConflict(terms.idempotencyKey, existing, terms.amount);
    }
    if (existing && existing.state !== 'released') {
      const windowTotal = addMoney(spent, existing.amount);
      return { reservation: copy(existing), fresh: false, windowTotal };
    }
    const windowTotal = checkLimits(terms.amount, spent, limits);
    const record: CeilingReservation = {
      ...terms,
      state: 'reserved',
      attempt: (existing?.attempt ?? 0) + 1,
      reservedAt: now,
      updatedAt: now,
    };
    this.#records.set(terms.idempotencyKey, record);
    return { reservation: copy(record), fresh: true, windowTotal };
  }

  async markExecuting(key: string, now: Date): Promise<CeilingReservation> {
    return this.#move(key, ['reserved', 'executing'], 'executing', 'mark executing', now);
  }

  async commit(key: string, receipt: TransferReceipt, now: Date): Promise<CeilingReservation> {
    const record = this.#records.get(key);
    if (record?.state === 'committed') return copy(record);
    const moved = this.#move(key, ['reserved', 'executing'], 'committed', 'commit', now);
    const stored = this.#records.get(key)!;
    stored.receipt = structuredClone(receipt);
    return { ...moved, receipt: structuredClone(receipt) };
  }

  async release(key: string, now: Date): Promise<CeilingReservation | undefined> {
    const record = this.#records.get(key);
    if (record?.state !== 'reserved' && record?.state !== 'executing') return undefined;
    return this.#move(key, ['reserved', 'executing'], 'released', 'release', now);
  }

  async get(key: string): Promise<CeilingReservation | undefined> {
    const record = this.#records.get(key);
    return record && copy(record);
  }

  async usage(scope: CeilingScope & { decimals: number }, since: Date): Promise<CeilingUsage> {
    let committed = zeroMoney(scope.currency, scope.decimals);
    let pending = zeroMoney(scope.currency, scope.decimals);
    for (const record of this.#inWindow(scope, since)) {
      if (record.state === 'committed') committed = addMoney(committed, record.amount);
      else pending = addMoney(pending, record.amount);
    }
    return { committed, pending };
  }

  #windowTotal(scope: CeilingScope, decimals: number, since: Date, except: string): Money {
    let total = zeroMoney(scope.currency, decimals);
    for (const record of this.#inWindow(scope, since)) {
      if (record.idempotencyKey !== except) total = addMoney(total, record.amount);
    }
    return total;
  }

  *#inWindow(scope: CeilingScope, since: Date): Iterable<CeilingReservation> {
    for (const record of this.#records.values()) {
      if (
        record.appId === scope.appId &&
        record.agentId === scope.agentId &&
        record.currency === scope.currency &&
        record.state !== 'released' &&
        record.reservedAt.getTime() > since.getTime()
      )
        yield record;
    }
  }

  #move(
    key: string,
    from: CeilingReservation['state'][],
    to: CeilingReservation['state'],
    wanted: string,
    now: Date,
  ): CeilingReservation {
    const record = this.#records.get(key);
    if (!record || !from.includes(record.state)) throw ledgerConflict(key, wanted, record?.state);
    record.state = to;
    record.updatedAt = now;
    return copy(record);
  }
}

function sameTerms(record: CeilingReservation, amount: Money): boolean {
  return (
    record.amount.currency === amount.currency &&
    record.amount.amount === amount.amount &&
    record.amount.decimals === amount.decimals
  );
}

function copy(record: CeilingReservation): CeilingReservation {
  return {
    ...record,
    amount: { ...record.amount },
    ...(record.receipt ? { receipt: structuredClone(record.receipt) } : {}),
  };
}
