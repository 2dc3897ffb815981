import type { Queryable } from '../db/index.js';
import { QUERY_LEXEMES } from './sql.js';

/** Options for {@link fullTextQuery}. */
export interface FullTextOptions {
  /** Matches the full-text query may rank: `ts_rank` costs time linear in them. Default 2,000. */
  budget?: number;
}

const MAX_LEXEMES = 32;

/**
 * Builds the full-text side of hybrid recall: a tsquery ORing the query's lexemes (stemmed
 * with PostgreSQL's `english` configuration, as the index is). An OR query ranks every row
 * that matches any word, so when the searched population is larger than the budget, common
 * lexemes are dropped — rarest first, as IDF weighting would rank them — until their summed
 * document frequencies (estimated in `veridex_memory_terms`) fit the budget; the rarest one
 * always stays. The vector side still sees the whole query. Returns `undefined` when no
 * lexeme occurs in memory at all.
 */
export async function fullTextQuery(
  db: Queryable,
  query: string,
  population: number,
  options: FullTextOptions = {},
): Promise<string | undefined> {
  const budget = options.budget ?? 2_000;
  const { rows } = await db.query<{ lexeme: string; frequency: number }>(QUERY_LEXEMES, [query]);
  const present = rows
    .filter((row) => row.frequency > 0)
    .slice(0, MAX_LEXEMES)
    .sort((a, b) => a.frequency - b.frequency || a.lexeme.localeCompare(b.lexeme));
  if (present.length === 0) return undefined;
  let chosen = present;
  if (population > budget) {
    chosen = [];
    let total = 0;
    for (const row of present) {
      if (chosen.length > 0 && total + row.frequency > budget) break;
      chosen.push(row);
      total += row.frequency;
    }
  }
  // Lexemes are quoted so that no character in them is read as tsquery syntax.
  return chosen
    .map((row) => `'${row.lexeme.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`)
    .join(' | ');
}
