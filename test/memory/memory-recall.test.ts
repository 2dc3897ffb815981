import { vector } from '@electric-sql/pglite-pgvector';
import { expect, it } from 'vitest';
import { describeEachDatabase } from '../support/databases.js';
import { countRecords, DAY, makeMemory, TestClock } from './memory-fixture.js';

describeEachDatabase(
  'MemoryManager recall, procedures and links',
  ({ db }) => {
    it('versions procedures and hands the current ones to the context compiler', async () => {
      const { memory } = makeMemory(db());
      await memory.setProcedure('refunds', 'Refunds above 100 EUR need a manager.');
      await memory.setProcedure('greeting', 'Greet the customer by name.');
      const updated = await memory.setProcedure('refunds', 'Refunds above 50 EUR need a manager.');
      expect(updated.status === 'written' && updated.record.version).toBe(2);
      expect(updated.status === 'written' && updated.invalidated[0]?.invalidationReason).toBe(
        'superseded',
      );
      expect(await memory.proceduralFor()).toEqual([
        'Greet the customer by name.',
        'Refunds above 50 EUR need a manager.',
      ]);
      expect(await memory.proceduralFor(['other'])).toEqual([]);
    });

    it('links strongly similar records and follows links one hop, never across namespaces', async () => {
      const { memory } = makeMemory(db(), { linkThreshold: 0.5 });
      const invoice = await memory.write({
        content: 'Invoice INV-1234 from Acme was paid on March 3',
      });
      const related = await memory.write({
        content: 'Acme invoice INV-1234 was disputed before it was paid',
      });
      if (invoice.status !== 'written' || related.status !== 'written')
        throw new Error('unexpected');
      expect(related.links).toContainEqual(
        expect.objectContaining({
          from: related.record.id,
          to: invoice.record.id,
          type: 'relates_to',
        }),
      );
      const summary = await memory.write({
        content: 'Quarter close summary',
        derivedFrom: [invoice.record.id],
      });
      if (summary.status !== 'written') throw new Error('unexpected');
      expect(summary.links).toEqual([
        { from: summary.record.id, to: invoice.record.id, type: 'derived_from', weight: 1 },
      ]);

      const hits = await memory.recall('quarter close', { linked: 5 });
      expect(hits[0]!.record.id).toBe(summary.record.id);
      expect(hits.find((hit) => hit.record.id === invoice.record.id)?.via).toEqual({
        from: summary.record.id,
        type: 'derived_from',
      });

      const other = await memory.write({
        content: 'Tenant B quarter close notes',
        namespace: ['tenant-b'],
        derivedFrom: [invoice.record.id],
      });
      expect(other.status).toBe('written');
      const tenantB = await memory.recall('quarter close notes', {
        namespace: ['tenant-b'],
        linked: 5,
      });
      expect(tenantB.map((hit) => hit.record.namespace)).toEqual([['tenant-b']]);
    });

    it('ranks an older episode below an equally relevant newer one, and reinforces recalled episodes', async () => {
      const clock = new TestClock();
      const { memory } = makeMemory(db(), { now: clock.now, decay: { halfLifeMs: 2 * DAY } });
      await memory.write({
        tier: 'episodic',
        content: 'Discussed the Acme renewal with the customer (call one)',
      });
      clock.advance(4 * DAY);
      await memory.write({
        tier: 'episodic',
        content: 'Discussed the Acme renewal with the customer (call two)',
      });
      const hits = await memory.recall('acme renewal discussion', { reinforce: false });
      expect(hits.map((hit) => hit.record.content)).toEqual([
        'Discussed the Acme renewal with the customer (call two)',
        'Discussed the Acme renewal with the customer (call one)',
      ]);
      expect(hits[1]!.decay).toBeCloseTo(0.25, 6);
      expect(hits[1]!.score).toBeLessThan(hits[0]!.score);

      await memory.recall('acme renewal discussion');
      const [newer, older] = await memory.recall('acme renewal discussion', { reinforce: false });
      expect(older!.record).toMatchObject({ strength: 1.25, recallCount: 1 });
      expect(older!.decay).toBeCloseTo(1.25, 6);
      expect(newer!.record.strength).toBe(2);
    });

    it('filters recall by tier, tags, time and namespace', async () => {
      const clock = new TestClock();
      const { memory } = makeMemory(db(), { now: clock.now, namespace: ['tenant-a', 'user-1'] });
      await memory.write({ content: 'Grace likes espresso', tags: ['food'] });
      clock.advance(DAY);
      await memory.write({
        tier: 'episodic',
        content: 'Grace ordered espresso beans',
        tags: ['orders'],
      });
      await memory.write({
        content: 'Grace likes espresso too',
        namespace: ['tenant-b', 'user-1'],
      });
      const contents = async (options: Parameters<typeof memory.recall>[1]) =>
        (await memory.recall('grace espresso', { linked: 0, ...options }))
          .map((hit) => hit.record.content)
          .sort();
      expect(await contents({})).toEqual(['Grace likes espresso', 'Grace ordered espresso beans']);
      expect(await contents({ tiers: ['episodic'] })).toEqual(['Grace ordered espresso beans']);
      expect(await contents({ tags: ['food'] })).toEqual(['Grace likes espresso']);
      expect(await contents({ since: new Date(clock.time - DAY / 2) })).toEqual([
        'Grace ordered espresso beans',
      ]);
      expect(await contents({ until: new Date(clock.time - DAY / 2) })).toEqual([
        'Grace likes espresso',
      ]);
      expect(await contents({ namespace: ['tenant-a'] })).toEqual([
        'Grace likes espresso',
        'Grace ordered espresso beans',
      ]);
      expect(await contents({ namespace: ['tenant-b'] })).toEqual(['Grace likes espresso too']);
    });

    it('answers as of a past time, and forgets without deleting', async () => {
      const clock = new TestClock();
      const { memory } = makeMemory(db(), { now: clock.now });
      await memory.write({
        content: 'Hiro works at Globex',
        subject: 'hiro',
        predicate: 'works at',
        confidence: 0.7,
      });
      const before = new Date(clock.time + DAY / 2);
      clock.advance(DAY);
      await memory.write({
        content: 'Hiro works at Hooli',
        subject: 'hiro',
        predicate: 'works at',
        confidence: 0.9,
      });
      const now = await memory.recall('hiro works', { linked: 0 });
      expect(now.map((hit) => hit.record.content)).toEqual(['Hiro works at Hooli']);
      const then = await memory.recall('hiro works', { asOf: before, linked: 0 });
      expect(then.map((hit) => hit.record.content)).toEqual(['Hiro works at Globex']);

      const forgotten = await memory.forget(['default'], 'hiro|works at');
      expect(forgotten).toMatchObject({
        content: 'Hiro works at Hooli',
        invalidationReason: 'revoked',
      });
      expect(await memory.recall('hiro works', { linked: 0 })).toEqual([]);
      const all = await memory.recall('hiro works', { includeInvalidated: true, linked: 0 });
      expect(all.map((hit) => hit.record.content).sort()).toEqual([
        'Hiro works at Globex',
        'Hiro works at Hooli',
      ]);
      expect(await countRecords(db())).toBe(2);
    });
  },
  { extensions: { vector } },
);
