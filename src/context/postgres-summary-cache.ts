import type { Database } from '../db/index.js';
import { PUT_SUMMARY, RECENT_SUMMARIES } from './sql.js';
import {
  type CachedSummary,
  SUMMARIES_KEPT_PER_THREAD,
  type SummaryCache,
} from './summary-cache.js';

interface SummaryRow {
  covered_units: number;
  span_hash: string;
  summary: string;
  summary_tokens: number;
  summarizer: string;
}

/**
 * A {@link SummaryCache} in `veridex_context_summaries` (PostgreSQL or PGlite; run `migrate()`
 * first), so summaries survive restarts and are shared by every process serving a thread.
 * The compiler uses it when given a `database`.
 *
 * @example new ContextCompiler({ model: 'gpt-4o', summaryCache: new PostgresSummaryCache(db) })
 */
export class PostgresSummaryCache implements SummaryCache {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async recent(threadId: string): Promise<CachedSummary[]> {
    const { rows } = await this.#db.query<SummaryRow>(RECENT_SUMMARIES, [
      threadId,
      SUMMARIES_KEPT_PER_THREAD,
    ]);
    return rows.map((row) => ({
      coveredUnits: row.covered_units,
      spanHash: row.span_hash,
      summary: row.summary,
      tokens: row.summary_tokens,
      summarizer: row.summarizer,
    }));
  }

  async put(threadId: string, entry: CachedSummary): Promise<void> {
    await this.#db.query(PUT_SUMMARY, [
      threadId,
      entry.spanHash,
      entry.coveredUnits,
      entry.summarizer,
      entry.summary,
      entry.tokens,
      SUMMARIES_KEPT_PER_THREAD - 1,
    ]);
  }
}
