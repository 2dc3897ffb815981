import { beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/index.js';
import {
  type IdempotencyStore,
  MemoryIdempotencyStore,
  PostgresIdempotencyStore,
} from '../../src/tools/index.js';
import { describeEachDatabase } from '../support/databases.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const LONG = 60_000;
const SHORT = 40;

/** The contract every IdempotencyStore must meet. `second()` is another handle on the same data. */
function storeContract(store: () => IdempotencyStore, second: () => Promise<IdempotencyStore>) {
  const reserve = (owner: string, leaseMs = LONG, key = 'k1') =>
    store().reserve(key, { owner, toolName: 'transfer', leaseMs });

  it('acquires a fresh key for its first owner and reports busy to others while the lease lives', async () => {
    expect(await reserve('a')).toMatchObject({
      status: 'acquired',
      record: { state: 'reserved', owner: 'a', toolName: 'transfer' },
    });
    expect(await reserve('b')).toMatchObject({ status: 'busy', record: { owner: 'a' } });
    expect(await reserve('a')).toMatchObject({ status: 'acquired' });
  });

  it('returns the committed result (bigint preserved) to every later reservation', async () => {
    await reserve('a');
    await store().markExecuting('k1', 'a', LONG);
    expect((await store().get('k1'))?.state).toBe('executing');
    await store().commit('k1', 'a', { content: 'done', amount: 1234567890123456789n });
    const later = await reserve('b');
    expect(later).toMatchObject({
      status: 'completed',
      record: { state: 'completed', owner: 'a' },
    });
    expect(later.record.result).toEqual({ content: 'done', amount: 1234567890123456789n });
  });

  it('returns a stored failure to later reservations', async () => {
    await reserve('a');
    await store().fail('k1', 'a', { code: 'tool_failed', message: 'card declined' });
    expect(await reserve('b')).toMatchObject({
      status: 'failed',
      record: { error: { code: 'tool_failed', message: 'card declined' } },
    });
  });

  it('lets a new owner take over a reservation whose lease ran out before execution began', async () => {
    await reserve('crashed', SHORT);
    await sleep(SHORT * 2);
    expect(await reserve('b')).toMatchObject({
      status: 'acquired',
      record: { owner: 'b', state: 'reserved' },
    });
    await expect(store().commit('k1', 'crashed', {})).rejects.toMatchObject({
      code: 'idempotency_conflict',
    });
  });

  it('marks a key in_doubt when its owner crashed while executing, instead of re-executing', async () => {
    await reserve('crashed');
    await store().markExecuting('k1', 'crashed', SHORT);
    await sleep(SHORT * 2);
    expect(await reserve('b')).toMatchObject({
      status: 'in_doubt',
      record: { state: 'in_doubt', owner: 'crashed' },
    });
    expect(await reserve('c')).toMatchObject({ status: 'in_doubt' });
  });

  it('accepts a late commit from the in-doubt owner (the truth arrived)', async () => {
    await reserve('slow');
    await store().markExecuting('k1', 'slow', SHORT);
    await sleep(SHORT * 2);
    await reserve('b');
    await store().commit('k1', 'slow', { content: 'late' });
    expect(await reserve('c')).toMatchObject({
      status: 'completed',
      record: { result: { content: 'late' } },
    });
  });

  it('lets an operator resolve an in-doubt key as completed, failed or released', async () => {
    for (const [key, resolution, expected] of [
      [
        'r1',
        { state: 'completed', result: { content: 'looked up' } },
        { status: 'completed', record: { result: { content: 'looked up' } } },
      ],
      [
        'r2',
        { state: 'failed', error: { code: 'tool_failed', message: 'never sent' } },
        { status: 'failed' },
      ],
      ['r3', { state: 'released' }, { status: 'acquired', record: { owner: 'next' } }],
    ] as const) {
      await reserve('a', LONG, key);
      await store().markInDoubt(key, 'a');
      await store().resolve(key, resolution);
      expect(await reserve('next', LONG, key)).toMatchObject(expected);
    }
  });

  it('refuses to resolve a key that is not in doubt', async () => {
    await reserve('a');
    await expect(store().resolve('k1', { state: 'released' })).rejects.toMatchObject({
      code: 'idempotency_conflict',
    });
    await expect(
      store().resolve('missing', { state: 'completed', result: 1 }),
    ).rejects.toMatchObject({ code: 'idempotency_conflict' });
  });

  it('refuses state changes from an owner that does not hold the key', async () => {
    await reserve('a');
    await expect(store().markExecuting('k1', 'b', LONG)).rejects.toMatchObject({
      code: 'idempotency_conflict',
    });
    await expect(store().fail('k1', 'b', { code: 'x', message: 'y' })).rejects.toMatchObject({
      code: 'idempotency_conflict',
    });
    await expect(store().release('k1', 'b')).rejects.toMatchObject({
      code: 'idempotency_conflict',
    });
  });

  it('forgets a released key so the next reservation acquires it', async () => {
    await reserve('a');
    await store().release('k1', 'a');
    expect(await store().get('k1')).toBeUndefined();
    expect(await reserve('b')).toMatchObject({ status: 'acquired', record: { owner: 'b' } });
  });

  it('lets exactly one of many concurrent reservations (over two handles) acquire a key', async () => {
    const other = await second();
    const attempts = Array.from({ length: 8 }, (_, index) =>
      (index % 2 === 0 ? store() : other).reserve('race', {
        owner: `o${index}`,
        toolName: 't',
        leaseMs: LONG,
      }),
    );
    const outcomes = await Promise.all(attempts);
    expect(outcomes.filter((outcome) => outcome.status === 'acquired')).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome.status === 'busy')).toHaveLength(7);
  });
}

describe('MemoryIdempotencyStore', () => {
  let current = new MemoryIdempotencyStore();
  beforeEach(() => {
    current = new MemoryIdempotencyStore();
  });
  storeContract(
    () => current,
    async () => current,
  );
});

describeEachDatabase('PostgresIdempotencyStore', ({ db, open }) => {
  storeContract(
    () => new PostgresIdempotencyStore(db()),
    async () => new PostgresIdempotencyStore((await open()) as Database),
  );
});

describe('MemoryIdempotencyStore retention', () => {
  it('forgets the oldest settled keys beyond maxSettled but never a live one', async () => {
    const { MemoryIdempotencyStore } = await import('../../src/tools/index.js');
    const store = new MemoryIdempotencyStore({ maxSettled: 3 });
    const live = await store.reserve('live', { owner: 'o', toolName: 't', leaseMs: 60_000 });
    expect(live.status).toBe('acquired');
    for (let index = 0; index < 6; index++) {
      await store.reserve(`k${index}`, { owner: 'o', toolName: 't', leaseMs: 60_000 });
      await store.commit(`k${index}`, 'o', { n: index });
    }
    expect(store.size).toBeLessThanOrEqual(4);
    expect((await store.get('live'))?.state).toBe('reserved');
    expect(await store.get('k0')).toBeUndefined();
    expect((await store.get('k5'))?.state).toBe('completed');
  });
});
