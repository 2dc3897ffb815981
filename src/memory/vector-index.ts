import { type Database, isUniqueViolation, type Queryable } from '../db/index.js';
import { nearestCentroids, trainCentroids } from './centroids.js';
import { Sketcher } from './sketch.js';
import {
  ASSIGN_CLUSTERS,
  boundedCount,
  CENTROID_GENERATION,
  COUNT_RECORDS,
  INSERT_CENTROIDS,
  LATEST_CENTROIDS,
  pageEmbeddings,
  pgvectorCandidates,
  probedListsSql,
  type SqlParams,
  sketchCandidates,
  VACUUM_RECORDS,
} from './sql.js';
import { cosineSimilarity, decodeVector, encodeVector, vectorLiteral } from './vector-codec.js';
import type { VectorSetup } from './vector-setup.js';

/**
 * The inverted-file (IVF) settings. Below `threshold` records every vector query is exact;
 * at `threshold` the index trains `lists` centroids (k-means over a sample) and files each
 * record under its nearest one, and a query then scores only the `probes` nearest lists —
 * unless its filtered population is at most `exactBelow` records (a small namespace in a large
 * table), which is scanned exactly. `false` keeps every query exact.
 */
export interface InvertedFileOptions {
  /** Default 5,000. */
  threshold?: number;
  /** Default 256. */
  lists?: number;
  /** Default 8. */
  probes?: number;
  /** Default 2,000. */
  exactBelow?: number;
  /** Records k-means trains on. Default 8,000. */
  sample?: number;
}

/** The stored vector columns of one record. */
export interface VectorColumns {
  /** Float32 bytes, hex: stored in fallback mode (pgvector mode keeps the vector column only). */
  embedding_hex: string | null;
  sketch: string | null;
  cluster: number | null;
  embedding_text: string | null;
}

/** A vector candidate: the record row and its cosine similarity to the query. */
export interface VectorCandidate {
  row: Record<string, unknown>;
  similarity: number;
}

const RECHECK_CENTROIDS_MS = 30_000;

/**
 * Vector search over the memory table, the same code on both backends: pgvector computes
 * distances in SQL where it is installed; elsewhere a 256-bit sketch pre-selects candidates
 * in SQL (`bit_count` of the XOR) and exact cosine similarity is computed here over their
 * stored float arrays. Either way an inverted file keeps large tables sub-linear.
 */
export class VectorIndex {
  readonly setup: VectorSetup;
  readonly #db: Database;
  readonly #sketcher: Sketcher | undefined;
  readonly #ivf: Required<InvertedFileOptions> | undefined;
  #centroids: Float32Array[] = [];
  #generation = 0;
  #checkedAt = 0;
  #estimatedCount: number | undefined;

  constructor(db: Database, setup: VectorSetup, ivf: InvertedFileOptions | false = {}) {
    this.#db = db;
    this.setup = setup;
    this.#sketcher = setup.mode === 'fallback' ? new Sketcher(setup.dimensions) : undefined;
    this.#ivf =
      ivf === false
        ? undefined
        : {
            threshold: ivf.threshold ?? 5_000,
            lists: ivf.lists ?? 256,
            probes: ivf.probes ?? 8,
            exactBelow: ivf.exactBelow ?? 2_000,
            sample: ivf.sample ?? 8_000,
          };
  }

  /** Populations up to this size are searched exactly even when the inverted file is trained. */
  get exactBelow(): number {
    return this.#ivf?.exactBelow ?? Number.POSITIVE_INFINITY;
  }

  /** True once centroids are trained (the inverted file is active). */
  get trained(): boolean {
    return this.#centroids.length > 0;
  }

  /** The stored columns for `vector` (call {@link refresh} first in long-lived processes). */
  columns(vector: readonly number[]): VectorColumns {
    return {
      // In pgvector mode a second copy would push rows past PostgreSQL's 2 kB TOAST threshold,
      // and every distance computation would then fetch the vector out of line.
      embedding_hex: this.setup.vector ? null : encodeVector(vector).toString('hex'),
      sketch: this.#sketcher ? this.#sketcher.sketch(vector) : null,
      cluster: this.trained ? nearestCentroids(this.#centroids, vector, 1)[0]! : null,
      embedding_text: this.setup.vector ? vectorLiteral(vector) : null,
    };
  }

  /** Loads centroids trained by any process (at most every 30 s unless `force`). */
  async refresh(force = false): Promise<void> {
    if (!this.#ivf) return;
    const now = Date.now();
    if (!force && now - this.#checkedAt < RECHECK_CENTROIDS_MS) return;
    this.#checkedAt = now;
    const { rows } = await this.#db.query<{ generation: number | null }>(CENTROID_GENERATION);
    const generation = rows[0]?.generation ?? 0;
    if (generation === this.#generation) return;
    const centroids = await this.#db.query<{ centroid: Buffer }>(LATEST_CENTROIDS);
    this.#centroids = centroids.rows.map((row) => decodeVector(row.centroid));
    this.#generation = generation;
  }

  /**
   * Trains the inverted file once the table reaches the threshold (no-op otherwise). Counts
   * the table once, then only re-counts when `written` records bring the estimate there.
   */
  async trainIfDue(written: number): Promise<boolean> {
    if (!this.#ivf || this.trained) return false;
    if (this.#estimatedCount !== undefined) {
      this.#estimatedCount += written;
      if (this.#estimatedCount < this.#ivf.threshold) return false;
    }
    await this.refresh(true);
    if (this.trained) return false;
    const { rows } = await this.#db.query<{ count: number }>(COUNT_RECORDS);
    this.#estimatedCount = rows[0]?.count ?? 0;
    if (this.#estimatedCount < this.#ivf.threshold) return false;
    await this.train();
    return true;
  }

  /**
   * (Re)trains the centroids on a sample of stored embeddings and re-files every record.
   * Run it after the data has grown or shifted a lot; queries stay correct meanwhile.
   */
  async train(): Promise<void> {
    const ivf = this.#ivf ?? { lists: 256, sample: 8_000 };
    const sample = await this.#db.query<{ id: string; embedding: Buffer | string }>(
      pageEmbeddings(this.setup.vector),
      ['', ivf.sample],
    );
    const vectors = sample.rows.map((row) => this.#decode(row.embedding));
    if (vectors.length === 0) return;
    const centroids = trainCentroids(vectors, { lists: ivf.lists });
    const generation = this.#generation + 1;
    try {
      await this.#db.query(INSERT_CENTROIDS, [
        generation,
        this.setup.dimensions,
        centroids.map((_, index) => index),
        centroids.map((centroid) => encodeVector(centroid).toString('hex')),
      ]);
    } catch (error) {
      // Another process trained this generation at the same moment: use theirs.
      if (!isUniqueViolation(error)) throw error;
      await this.refresh(true);
      return;
    }
    this.#centroids = centroids;
    this.#generation = generation;
    let after = '';
    for (;;) {
      const page = await this.#db.query<{ id: string; embedding: Buffer | string }>(
        pageEmbeddings(this.setup.vector),
        [after, 2_000],
      );
      if (page.rows.length === 0) break;
      const clusters = page.rows.map(
        (row) => nearestCentroids(centroids, this.#decode(row.embedding), 1)[0]!,
      );
      await this.#db.query(ASSIGN_CLUSTERS, [page.rows.map((row) => row.id), clusters]);
      after = page.rows.at(-1)!.id;
    }
    // Re-filing left a dead version of every row, and PGlite has no autovacuum: without this
    // the planner keeps treating a 100k-row table as empty and scans the dead versions.
    await this.#db.query(VACUUM_RECORDS);
  }

  #decode(stored: Buffer | string): Float32Array {
    return typeof stored === 'string'
      ? Float32Array.from(JSON.parse(stored) as number[])
      : decodeVector(stored);
  }

  /**
   * The `limit` records most similar to `query` among those matching `filterSql`, best first.
   * `params` already holds the filter's parameters; `population` (the number of records the
   * filter matches, counted at least up to `exactBelow + 1`) saves a count when known.
   */
  async candidates(
    db: Queryable,
    query: readonly number[],
    filterSql: string,
    params: SqlParams,
    limit: number,
    population?: number,
  ): Promise<VectorCandidate[]> {
    let where = filterSql;
    if (this.#ivf && this.trained) {
      const count =
        population ??
        (
          await db.query<{ count: number }>(
            boundedCount(filterSql, `${this.#ivf.exactBelow + 1}`),
            params.values,
          )
        ).rows[0]!.count;
      if (count > this.#ivf.exactBelow) {
        const probes = nearestCentroids(this.#centroids, query, this.#ivf.probes);
        where = `${filterSql} AND ${probedListsSql(params.add(probes))}`;
      }
    }
    if (this.setup.vector) {
      const sql = pgvectorCandidates(
        this.setup.vector,
        where,
        params.add(vectorLiteral(query)),
        params.add(limit),
      );
      const { rows } = await db.query(sql, params.values);
      return rows.map((row) => ({ row, similarity: Number(row.similarity) }));
    }
    // Twice the sketch candidates, re-ranked exactly: 256-bit sketches estimate angles to ~6°.
    const sql = sketchCandidates(
      where,
      params.add(this.#sketcher!.sketch(query)),
      params.add(Math.max(limit * 2, 20)),
    );
    const { rows } = await db.query(sql, params.values);
    return rows
      .map((row) => ({
        row,
        similarity: cosineSimilarity(query, decodeVector(row.embedding_bytes as Buffer)),
      }))
      .sort((a, b) => b.similarity - a.similarity)
      .slice(0, limit);
  }
}
