import { describe, expect, it } from 'vitest';
import {
  type ContextEnvelope,
  type ContextLedger,
  MemoryContextLedger,
  PostgresContextLedger,
  sealEnvelope,
  verifyEnvelope,
} from '../../src/context/index.js';
import { VeridexError } from '../../src/errors/index.js';
import { describeEachDatabase } from '../support/databases.js';

/** The ledger these envelopes are sealed for and received in. */
const AUDIENCE = 'thread-1';

const key = { id: 'ledger-key', secret: 'k'.repeat(32) };

function seal(
  version: number,
  payload: Record<string, unknown> = { step: version },
  parents?: number[],
): ContextEnvelope {
  return sealEnvelope(payload, {
    version,
    tokenBudget: 1_000,
    key,
    audience: AUDIENCE,
    ...(parents ? { parents } : {}),
  });
}

async function reasonOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return VeridexError.is(error, 'envelope_invalid') ? error.details.reason : error;
  }
  return 'resolved';
}

function ledgerContract(
  name: string,
  makeLedger: () => ContextLedger,
  reopen?: () => Promise<ContextLedger>,
): void {
  describe(name, () => {
    it('commits envelopes in version order and serves them by version and as head', async () => {
      const ledger = makeLedger();
      expect(await ledger.head('t')).toBeUndefined();
      expect(await ledger.nextVersion('t')).toBe(0);
      const first = seal(0);
      const second = seal(1);
      await ledger.commit('t', first);
      const entry = await ledger.commit('t', second);
      expect(entry.envelope).toEqual(second);
      expect(entry.rolledBack).toBe(false);
      expect(await ledger.head('t')).toEqual(second);
      expect((await ledger.get('t', 0))?.envelope).toEqual(first);
      expect(await ledger.get('t', 7)).toBeUndefined();
      expect((await ledger.list('t')).map((item) => item.envelope.version)).toEqual([0, 1]);
      expect(await ledger.nextVersion('t')).toBe(2);
      expect(await ledger.head('other')).toBeUndefined();
    });

    it('stores the signed bytes: what comes back still verifies', async () => {
      const ledger = makeLedger();
      await ledger.commit('t', seal(0, { nested: { b: 2, a: [1, 'x'] } }, []));
      const stored = (await ledger.get('t', 0))!.envelope;
      expect(verifyEnvelope(stored, { audience: AUDIENCE, keys: [key] }).valid).toBe(true);
    });

    it('treats committing the same envelope again as a no-op', async () => {
      const ledger = makeLedger();
      const envelope = seal(0);
      const first = await ledger.commit('t', envelope);
      const again = await ledger.commit('t', envelope);
      expect(again).toEqual(first);
      expect(await ledger.list('t')).toHaveLength(1);
    });

    it('refuses a different envelope under a stored version, and versions that do not grow', async () => {
      const ledger = makeLedger();
      await ledger.commit('t', seal(0));
      await ledger.commit('t', seal(5));
      expect(await reasonOf(ledger.commit('t', seal(5, { other: true })))).toBe('version_conflict');
      expect(await reasonOf(ledger.commit('t', seal(3)))).toBe('version_not_monotonic');
      expect((await ledger.list('t')).map((item) => item.envelope.version)).toEqual([0, 5]);
    });

    it('rolls back to the last valid envelope and never reuses a version', async () => {
      const ledger = makeLedger();
      await ledger.commit('t', seal(0));
      await ledger.commit('t', seal(1));
      await ledger.commit('t', seal(2));
      const restored = await ledger.rollback('t', 'downstream agent rejected v2');
      expect(restored?.version).toBe(1);
      expect(await ledger.head('t')).toEqual(restored);
      expect(await ledger.get('t', 2)).toMatchObject({
        rolledBack: true,
        rollbackReason: 'downstream agent rejected v2',
      });
      expect(await reasonOf(ledger.commit('t', seal(2, { retry: true })))).toBe('version_conflict');
      expect(await ledger.nextVersion('t')).toBe(3);
      await ledger.commit('t', seal(3));
      expect((await ledger.head('t'))?.version).toBe(3);
      await ledger.rollback('t');
      await ledger.rollback('t');
      expect((await ledger.head('t'))?.version).toBe(0);
      expect(await ledger.rollback('t')).toBeUndefined();
    });

    it('prunes all but the last N, keeping the head, the highest version and anything referenced', async () => {
      const ledger = makeLedger();
      for (let version = 0; version < 8; version++) {
        await ledger.commit('t', seal(version, { step: version }, version === 6 ? [2] : undefined));
      }
      await ledger.rollback('t'); // head is now 6
      await ledger.rollback('t'); // head is now 5
      const pruned = await ledger.prune('t', { keepLast: 2, keep: [0] });
      // Kept: 7 (highest), 6 (last 2), 5 (head), 2 (parent of 6), 0 (referenced by the caller).
      expect(pruned).toEqual([1, 3, 4]);
      expect((await ledger.list('t')).map((item) => item.envelope.version)).toEqual([
        0, 2, 5, 6, 7,
      ]);
      expect((await ledger.head('t'))?.version).toBe(5);
      expect(await ledger.nextVersion('t')).toBe(8);
    });

    if (reopen) {
      it('is visible through another handle on the same database', async () => {
        const ledger = makeLedger();
        await ledger.commit('t', seal(0));
        const other = await reopen();
        expect((await other.head('t'))?.version).toBe(0);
      });

      it('lets exactly one of two concurrent commits of one version win', async () => {
        const ledger = makeLedger();
        const other = await reopen();
        await ledger.commit('t', seal(0));
        const outcomes = await Promise.allSettled([
          ledger.commit('t', seal(1, { by: 'a' })),
          other.commit('t', seal(1, { by: 'b' })),
        ]);
        expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
        const rejected = outcomes.find(
          (outcome) => outcome.status === 'rejected',
        ) as PromiseRejectedResult;
        expect(VeridexError.is(rejected.reason, 'envelope_invalid')).toBe(true);
        expect(await ledger.list('t')).toHaveLength(2);
      });
    }
  });
}

ledgerContract('MemoryContextLedger', () => new MemoryContextLedger());

describe('MemoryContextLedger isolation', () => {
  it('keeps its own copy: changing a committed or returned envelope changes nothing stored', async () => {
    const ledger = new MemoryContextLedger();
    const envelope = seal(0, { items: ['a'] });
    await ledger.commit('t', envelope);
    (envelope.payload as { items: string[] }).items.push('b');
    const head = await ledger.head<{ items: string[] }>('t');
    head!.payload.items.push('c');
    expect((await ledger.head<{ items: string[] }>('t'))!.payload.items).toEqual(['a']);
  });
});

describeEachDatabase('PostgresContextLedger', ({ db, open }) => {
  ledgerContract(
    'contract',
    () => new PostgresContextLedger(db()),
    async () => new PostgresContextLedger(await open()),
  );
});
