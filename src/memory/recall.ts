import type { Database } from '../db/index.js';
import type { Decay } from './decay.js';
import { rowToRecord } from './record-row.js';
import {
  boundedCount,
  lexicalCandidates,
  type RecordFilter,
  recordFilterSql,
  SqlParams,
} from './sql.js';
import { type FullTextOptions, fullTextQuery } from './term-statistics.js';
import type { RecallHit } from './types.js';
import type { VectorIndex } from './vector-index.js';

/** Tuning of the hybrid search. */
export interface HybridSearchOptions extends FullTextOptions {
  /** Full-text candidates fused. Default 50. */
  lexicalCandidates?: number;
  /** Vector candidates fused. Default 50. */
  vectorCandidates?: number;
  /** The k of reciprocal-rank fusion, 1/(k + rank). Default 60 (Cormack et al., 2009). */
  rrfK?: number;
  /** Weight of invalidated records when they are included. Default 0.25. */
  invalidatedWeight?: number;
  /**
   * Vector candidates less similar than this are not fused (with few records, the nearest
   * vectors can be unrelated). Default 0.2.
   */
  minSimilarity?: number;
}

/** What one hybrid search needs. */
export interface HybridSearchInput {
  db: Database;
  index: VectorIndex;
  decay: Decay;
  query: string;
  queryVector: readonly number[];
  filter: RecordFilter;
  limit: number;
  offset?: number;
  now: Date;
  options: HybridSearchOptions;
}

/**
 * Hybrid recall: full-text candidates (PostgreSQL `tsvector` + GIN; see {@link fullTextQuery})
 * and vector candidates are fused by reciprocal-rank fusion, normalised so that a record first
 * in both lists scores 1; then decay S0·e^(−λt), confidence and validity are applied.
 * Returns the best `limit` hits (after `offset`), best first.
 */
export async function hybridSearch(input: HybridSearchInput): Promise<RecallHit[]> {
  const { options } = input;
  const k = options.rrfK ?? 60;
  const wanted = input.limit + (input.offset ?? 0);

  // One bounded count of the searched population serves both sides: the full-text side
  // prunes common words only for large populations, the vector side scans small ones exactly.
  const countParams = new SqlParams();
  const countSql = boundedCount(
    recordFilterSql(input.filter, countParams),
    countParams.add(
      Math.max(
        options.budget ?? 2_000,
        Number.isFinite(input.index.exactBelow) ? input.index.exactBelow : 0,
      ) + 1,
    ),
  );
  const population = (await input.db.query<{ count: number }>(countSql, countParams.values))
    .rows[0]!.count;
  const lexical = (async () => {
    const tsQuery = await fullTextQuery(input.db, input.query, population, options);
    if (!tsQuery) return [];
    const params = new SqlParams();
    const filterSql = recordFilterSql(input.filter, params);
    const sql = lexicalCandidates(
      filterSql,
      params.add(tsQuery),
      params.add(Math.max(wanted, options.lexicalCandidates ?? 50)),
    );
    return (await input.db.query(sql, params.values)).rows;
  })();
  const vectorParams = new SqlParams();
  const vector = input.index.candidates(
    input.db,
    input.queryVector,
    recordFilterSql(input.filter, vectorParams),
    vectorParams,
    Math.max(wanted, options.vectorCandidates ?? 50),
    population,
  );
  const [lexicalRows, vectorRows] = await Promise.all([lexical, vector]);

  const fused = new Map<string, { row: Record<string, unknown>; hit: Partial<RecallHit> }>();
  lexicalRows.forEach((row, index) => {
    fused.set(String(row.id), { row, hit: { lexicalRank: index + 1 } });
  });
  const minSimilarity = options.minSimilarity ?? 0.2;
  vectorRows
    .filter(({ similarity }) => similarity >= minSimilarity)
    .forEach(({ row, similarity }, index) => {
      const entry = fused.get(String(row.id)) ?? { row, hit: {} };
      entry.hit.vectorRank = index + 1;
      entry.hit.similarity = similarity;
      fused.set(String(row.id), entry);
    });

  const validAt = (input.filter.asOf ?? input.now).getTime();
  const hits: RecallHit[] = [];
  for (const { row, hit } of fused.values()) {
    const record = rowToRecord(row);
    const rrf =
      ((hit.lexicalRank ? 1 / (k + hit.lexicalRank) : 0) +
        (hit.vectorRank ? 1 / (k + hit.vectorRank) : 0)) *
      ((k + 1) / 2);
    const decay = input.decay.factor(record.tier, record.strength, record.reinforcedAt, input.now);
    const validity =
      record.invalidatedAt && Date.parse(record.invalidatedAt) <= validAt
        ? (options.invalidatedWeight ?? 0.25)
        : 1;
    hits.push({ ...hit, record, decay, score: rrf * decay * record.confidence * validity });
  }
  hits.sort((a, b) => b.score - a.score || a.record.id.localeCompare(b.record.id));
  return hits.slice(input.offset ?? 0, wanted);
}
