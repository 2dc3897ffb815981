import { beforeEach, describe, expect, it } from 'vitest';
import {
  type CeilingLimits,
  type CeilingStore,
  MemoryCeilingStore,
  type Money,
  PostgresCeilingStore,
  type ReserveCeilingRequest,
} from '../../src/treasury/index.js';
import { describeEachDatabase } from '../support/databases.js';

const DAY = 24 * 60 * 60 * 1000;
const T0 = new Date('2026-03-02T09:00:00Z');
const usd = (dollars: number): Money => ({
  amount: BigInt(dollars) * 100n,
  currency: 'USD',
  decimals: 2,
});
const at = (ms: number) => new Date(T0.getTime() + ms);

function request(
  key: string,
  dollars: number,
  limits: Partial<CeilingLimits> = {},
  overrides: Partial<ReserveCeilingRequest> = {},
): ReserveCeilingRequest {
  return {
    idempotencyKey: key,
    appId: 'app',
    agentId: 'payout-bot',
    currency: 'USD',
    amount: usd(dollars),
    counterparty: '0xabc',
    threadId: 't1',
    runId: 't1',
    toolCallId: `call_${key}`,
    proposalHash: 'h'.repeat(64),
    limits: { windowMs: DAY, ...limits },
    now: T0,
    ...overrides,
  };
}

const scope = { appId: 'app', agentId: 'payout-bot', currency: 'USD', decimals: 2 };

async function rejected(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    return error as { code: string; message: string; details: Record<string, unknown> };
  }
  throw new Error('expected a rejection');
}

function ceilingContract(store: () => CeilingStore, second: () => Promise<CeilingStore>) {
  it('reserves, marks executing and commits with the receipt; usage moves from pending to committed', async () => {
    const first = await store().reserve(request('k1', 60, { dailyLimit: usd(100) }));
    expect(first.fresh).toBe(true);
    expect(first.reservation).toMatchObject({ state: 'reserved', attempt: 1, amount: usd(60) });
    expect(first.windowTotal).toEqual(usd(60));
    expect(await store().usage(scope, at(-DAY))).toEqual({ committed: usd(0), pending: usd(60) });
    await store().markExecuting('k1', at(1));
    const receipt = { reference: '0xfeed', idempotencyKey: 'k1', executedAt: at(2).toISOString() };
    const committed = await store().commit('k1', receipt, at(2));
    expect(committed).toMatchObject({ state: 'committed', receipt });
    expect((await store().get('k1'))?.receipt).toEqual(receipt);
    expect(await store().usage(scope, at(-DAY))).toEqual({ committed: usd(60), pending: usd(0) });
    expect((await store().commit('k1', { reference: 'other' }, at(3))).receipt).toEqual(receipt);
  });

  it('refuses an amount above the per-transaction maximum with ceiling_exceeded and records nothing', async () => {
    const error = await rejected(
      store().reserve(request('big', 501, { perTransactionMax: usd(500) })),
    );
    expect(error).toMatchObject({
      code: 'ceiling_exceeded',
      details: { limit: 'per_transaction', requested: '501.00', maximum: '500.00' },
    });
    expect(error.message).toMatch(
      /501\.00 USD is above the per-transaction maximum of 500\.00 USD/,
    );
    expect(await store().get('big')).toBeUndefined();
  });

  it('refuses a reservation that would take the rolling window over the daily limit', async () => {
    const limits = { dailyLimit: usd(100) };
    await store().reserve(request('a', 60, limits));
    await store().reserve(request('b', 30, limits));
    const error = await rejected(store().reserve(request('c', 20, limits)));
    expect(error).toMatchObject({
      code: 'ceiling_exceeded',
      details: { limit: 'daily', spent: '90.00', remaining: '10.00', requested: '20.00' },
    });
    expect((await store().reserve(request('d', 10, limits))).windowTotal).toEqual(usd(100));
  });

  it('returns the existing reservation for a key again instead of counting it twice', async () => {
    const limits = { dailyLimit: usd(100) };
    await store().reserve(request('k', 80, limits));
    const again = await store().reserve(request('k', 80, limits, { now: at(5) }));
    expect(again).toMatchObject({ fresh: false, windowTotal: usd(80) });
    expect(again.reservation.attempt).toBe(1);
    expect(await store().usage(scope, at(-DAY))).toEqual({ committed: usd(0), pending: usd(80) });
    const conflict = await rejected(store().reserve(request('k', 81, limits)));
    expect(conflict.code).toBe('idempotency_conflict');
  });

  it('frees the limit on release and counts a re-reserved key as a new attempt', async () => {
    const limits = { dailyLimit: usd(100) };
    await store().reserve(request('k', 80, limits));
    expect((await store().release('k', at(1)))?.state).toBe('released');
    expect(await store().release('k', at(2))).toBeUndefined();
    expect(await store().usage(scope, at(-DAY))).toEqual({ committed: usd(0), pending: usd(0) });
    await store().reserve(request('other', 20, limits));
    const again = await store().reserve(request('k', 80, limits, { now: at(3) }));
    expect(again).toMatchObject({ fresh: true, reservation: { attempt: 2, state: 'reserved' } });
    expect(again.reservation.reservedAt.getTime()).toBe(at(3).getTime());
  });

  it('forgets spend older than the rolling window', async () => {
    const limits = { dailyLimit: usd(100) };
    await store().reserve(request('old', 90, limits));
    expect(
      (await rejected(store().reserve(request('soon', 20, limits, { now: at(DAY - 1) })))).code,
    ).toBe('ceiling_exceeded');
    const later = await store().reserve(request('later', 20, limits, { now: at(DAY + 1) }));
    expect(later.windowTotal).toEqual(usd(20));
  });

  it('keeps ceilings per app, agent and currency', async () => {
    const limits = { dailyLimit: usd(100) };
    await store().reserve(request('a', 100, limits));
    await store().reserve(request('b', 100, limits, { agentId: 'other-bot' }));
    await store().reserve(request('c', 100, limits, { appId: 'other-app' }));
    const eur = { amount: 10_000n, currency: 'EUR', decimals: 2 };
    await store().reserve(request('d', 0, { dailyLimit: eur }, { currency: 'EUR', amount: eur }));
    expect(await store().usage(scope, at(-DAY))).toEqual({ committed: usd(0), pending: usd(100) });
  });

  it('allows only the state changes the life cycle allows', async () => {
    await store().reserve(request('k', 10));
    await store().release('k', at(1));
    expect((await rejected(store().markExecuting('k', at(2)))).code).toBe('idempotency_conflict');
    expect((await rejected(store().commit('k', { reference: 'x' }, at(2)))).code).toBe(
      'idempotency_conflict',
    );
    expect((await rejected(store().markExecuting('missing', at(2)))).code).toBe(
      'idempotency_conflict',
    );
  });

  it('never lets concurrent reservations from two connections exceed the daily limit', async () => {
    const other = await second();
    const limits = { dailyLimit: usd(100) };
    const outcomes = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) =>
        (i % 2 === 0 ? store() : other).reserve(request(`c${i}`, 30, limits)),
      ),
    );
    const granted = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    const refused = outcomes.filter((outcome) => outcome.status === 'rejected');
    expect(granted).toHaveLength(3);
    for (const outcome of refused) {
      expect((outcome as PromiseRejectedResult).reason).toMatchObject({ code: 'ceiling_exceeded' });
    }
    expect(await store().usage(scope, at(-DAY))).toEqual({ committed: usd(0), pending: usd(90) });
  });
}

describe('MemoryCeilingStore', () => {
  let current = new MemoryCeilingStore();
  const fresh = () => {
    current = new MemoryCeilingStore();
  };
  beforeEach(fresh);
  ceilingContract(
    () => current,
    async () => current,
  );
});

describeEachDatabase('PostgresCeilingStore', ({ db, open }) => {
  ceilingContract(
    () => new PostgresCeilingStore(db()),
    async () => new PostgresCeilingStore(await open()),
  );
});
