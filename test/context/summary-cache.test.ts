import { describe, expect, it } from 'vitest';
import {
  type CachedSummary,
  ContextCompiler,
  MemorySummaryCache,
  PostgresSummaryCache,
  SUMMARIES_KEPT_PER_THREAD,
  type SummaryCache,
} from '../../src/context/index.js';
import { describeEachDatabase } from '../support/databases.js';
import { conversation } from './fixtures.js';

function entry(coveredUnits: number): CachedSummary {
  return {
    coveredUnits,
    spanHash: `hash-${coveredUnits}`,
    summary: `summary of ${coveredUnits}`,
    tokens: 4,
    summarizer: 'extractive/v1/200',
  };
}

function cacheContract(name: string, makeCache: () => SummaryCache): void {
  describe(name, () => {
    it('returns a thread’s entries newest first', async () => {
      const cache = makeCache();
      await cache.put('t', entry(10));
      await cache.put('t', entry(20));
      expect((await cache.recent('t')).map((item) => item.coveredUnits)).toEqual([20, 10]);
      expect(await cache.recent('other')).toEqual([]);
      expect((await cache.recent('t'))[0]).toEqual(entry(20));
    });

    it('keeps one entry per span and only the most recent few per thread', async () => {
      const cache = makeCache();
      for (let covered = 1; covered <= SUMMARIES_KEPT_PER_THREAD + 3; covered++)
        await cache.put('t', entry(covered));
      await cache.put('t', entry(SUMMARIES_KEPT_PER_THREAD + 3));
      const kept = await cache.recent('t');
      expect(kept.map((item) => item.coveredUnits)).toEqual([7, 6, 5, 4]);
    });
  });
}

cacheContract('MemorySummaryCache', () => new MemorySummaryCache());

describeEachDatabase('PostgresSummaryCache', ({ db }) => {
  cacheContract('contract', () => new PostgresSummaryCache(db()));

  it('lets a compiler in another process reuse a summary written by this one', async () => {
    const history = conversation(100);
    const first = new ContextCompiler({ model: 'gpt-4o', contextLimit: 8_000, database: db() });
    const written = await first.compile({ history, threadId: 'thread-9' });
    expect(written.report.summary?.cache).toBe('miss');
    const second = new ContextCompiler({ model: 'gpt-4o', contextLimit: 8_000, database: db() });
    const reused = await second.compile({ history, threadId: 'thread-9' });
    expect(reused.report.summary?.cache).toBe('hit');
    expect(reused.messages[0]!.content).toBe(written.messages[0]!.content);
    const { rows } = await db().query<{ count: string }>(
      'SELECT count(*)::text AS count FROM veridex_context_summaries',
    );
    expect(rows[0]!.count).toBe('1');
  });
});
