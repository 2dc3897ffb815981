// All SQL of the memory module. Tables are created by src/db/migrations/0006_memory.sql; the
// optional pgvector column by VECTOR_SETUP below (a conditional step, see vector-setup.ts).

import { quoteIdentifier } from '../db/schema-name.js';
import { VeridexError } from '../errors/index.js';

/** Collects positional parameters while a statement is assembled. */
export class SqlParams {
  readonly values: unknown[] = [];

  /** Adds `value` and returns its placeholder (`$n`). */
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/** The columns every record query returns (never the embedding or the search vector). */
export const RECORD_COLUMNS = `id, write_id, tier, namespace, namespace_path, key, version, content,
  subject, predicate, object, confidence, tags, value, thread_id, run_id, turn_index, source, trust,
  observed_at, valid_from, invalidated_at, invalidated_by, invalidation_reason, lineage_created_at,
  stored_at, strength, reinforced_at, recall_count`;

/** A pgvector operator or type, qualified with the extension's schema. */
export interface VectorSql {
  /** e.g. `"public".vector` */
  type: string;
  /** e.g. `OPERATOR("public".<=>)` */
  cosineDistance: string;
}

/** pgvector names in `schema`. */
export function vectorSql(schema: string): VectorSql {
  return {
    type: `${quoteIdentifier(schema)}.vector`,
    cosineDistance: `OPERATOR(${quoteIdentifier(schema)}.<=>)`,
  };
}

/** The schema the `vector` extension is installed in (no row: not installed). */
export const FIND_VECTOR_EXTENSION = `SELECT n.nspname AS schema FROM pg_extension e
  JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'`;

/** A row when the server could create the `vector` extension. */
export const VECTOR_EXTENSION_AVAILABLE = `SELECT 1 FROM pg_available_extensions WHERE name = 'vector'`;

/** Creates pgvector in `public`, so dropping a tenant schema never drops it. */
export const CREATE_VECTOR_EXTENSION = 'CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA public';

/** Adds the pgvector column (idempotent). `dimensions` is a validated integer. */
export function addVectorColumn(vector: VectorSql, dimensions: number): string {
  return `ALTER TABLE veridex_memory_records ADD COLUMN IF NOT EXISTS embedding ${vector.type}(${dimensions})`;
}

/** Serialises the conditional vector setup of one schema across processes. */
export const LOCK_SETUP = `SELECT pg_advisory_xact_lock(hashtext('veridex.memory.setup:' || current_schema()))`;

/** The schema's memory settings (vector mode, dimensions). */
export const READ_SETTINGS = 'SELECT name, value FROM veridex_memory_settings';

/** Upserts one memory setting. */
export const WRITE_SETTING = `INSERT INTO veridex_memory_settings (name, value) VALUES ($1, $2)
  ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value`;

/** Serialises writers of one namespace, so similarity checks see every committed record. */
export const LOCK_NAMESPACE = `SELECT pg_advisory_xact_lock(hashtext('veridex.memory:' || $1))`;

/** Records already stored for the given write ids (replays). */
export const FIND_BY_WRITE_IDS = `SELECT ${RECORD_COLUMNS} FROM veridex_memory_records
  WHERE write_id = ANY($1::text[])`;

/** Record versions by id. */
export const FIND_BY_IDS = `SELECT ${RECORD_COLUMNS} FROM veridex_memory_records WHERE id = ANY($1::text[])`;

/** Current record and highest version of each (namespace_path, key) pair. */
export const FIND_LINEAGES = `SELECT k.namespace_path, k.key,
    (SELECT max(version) FROM veridex_memory_records r
      WHERE r.namespace_path = k.namespace_path AND r.key = k.key) AS max_version,
    (SELECT row_to_json(c) FROM (SELECT ${RECORD_COLUMNS} FROM veridex_memory_records r
      WHERE r.namespace_path = k.namespace_path AND r.key = k.key AND r.invalidated_at IS NULL) c)
      AS current
  FROM unnest($1::text[], $2::text[]) AS k(namespace_path, key)`;

/** Every version of one key, oldest first. */
export const HISTORY = `SELECT ${RECORD_COLUMNS} FROM veridex_memory_records
  WHERE namespace_path = $1 AND key = $2 ORDER BY version`;

/** Column list of an inserted record, in the order of the recordset below. */
const INSERT_FIELDS = `id text, write_id text, tier text, namespace text[], namespace_path text,
  key text, version integer, content text, subject text, predicate text, object text,
  confidence double precision, tags text[], value jsonb, thread_id text, run_id text,
  turn_index integer, source text, trust text, observed_at timestamptz, valid_from timestamptz,
  invalidated_at timestamptz, invalidated_by text, invalidation_reason text,
  lineage_created_at timestamptz, stored_at timestamptz, strength double precision,
  reinforced_at timestamptz, embedding_hex text, sketch text, cluster integer, embedding_text text`;

/** Inserts the records of a JSON array (one statement per batch). */
export function insertRecords(vector: VectorSql | undefined): string {
  return `INSERT INTO veridex_memory_records (${RECORD_COLUMNS}, embedding_bytes, sketch, cluster${
    vector ? ', embedding' : ''
  })
  SELECT id, write_id, tier, namespace, namespace_path, key, version, content, subject, predicate,
    object, confidence, tags, value, thread_id, run_id, turn_index, source, trust, observed_at,
    valid_from, invalidated_at, invalidated_by, invalidation_reason, lineage_created_at, stored_at,
    strength, reinforced_at, 0, decode(embedding_hex, 'hex'), sketch::bit varying, cluster${
      vector ? `, embedding_text::${vector.type}` : ''
    }
  FROM json_to_recordset($1::json) AS r(${INSERT_FIELDS})`;
}

/** Invalidates the records of a JSON array of `{ id, invalidated_at, invalidated_by, reason }`; returns them. */
export const INVALIDATE = `UPDATE veridex_memory_records AS r
  SET invalidated_at = i.invalidated_at, invalidated_by = i.invalidated_by,
    invalidation_reason = i.reason
  FROM jsonb_to_recordset($1::jsonb) AS i(id text, invalidated_at timestamptz, invalidated_by text, reason text)
  WHERE r.id = i.id AND r.invalidated_at IS NULL
  RETURNING ${prefixed('r')}`;

/** Inserts the links of a JSON array (an existing link is kept). */
export const INSERT_LINKS = `INSERT INTO veridex_memory_links (from_id, to_id, type, weight, created_at)
  SELECT from_id, to_id, type, weight, created_at
  FROM jsonb_to_recordset($1::jsonb) AS l(from_id text, to_id text, type text, weight double precision, created_at timestamptz)
  ON CONFLICT DO NOTHING`;

/** Links from or to any of the given records. */
export const LINKS_OF = `SELECT from_id, to_id, type, weight FROM veridex_memory_links
  WHERE from_id = ANY($1::text[]) OR to_id = ANY($1::text[])`;

/** Applies recall reinforcement from a JSON array of `{ id, strength, reinforced_at }`. */
export const REINFORCE = `UPDATE veridex_memory_records AS r
  SET strength = u.strength, reinforced_at = u.reinforced_at, recall_count = r.recall_count + 1
  FROM jsonb_to_recordset($1::jsonb) AS u(id text, strength double precision, reinforced_at timestamptz)
  WHERE r.id = u.id`;

/** Filters shared by recall, listing and the BaseStore adapter. */
export interface RecordFilter {
  /** Namespace path prefix ('' = everything). */
  namespacePath?: string;
  /** Match `namespacePath` exactly instead of as a prefix. */
  exactNamespace?: boolean;
  tiers?: readonly string[];
  tags?: readonly string[];
  since?: Date;
  until?: Date;
  /** Validity instant; default: only current records. */
  asOf?: Date;
  includeInvalidated?: boolean;
  /** BaseStore-style filters on `value`. */
  value?: Record<string, unknown>;
}

/** The WHERE conditions for `filter` (never empty: `TRUE` at least). */
export function recordFilterSql(filter: RecordFilter, params: SqlParams): string {
  const conditions: string[] = [];
  if (filter.namespacePath && filter.exactNamespace) {
    conditions.push(`namespace_path = ${params.add(filter.namespacePath)}`);
  } else if (filter.namespacePath) {
    const like = `${filter.namespacePath.replace(/[\\%_]/g, (c) => `\\${c}`)}.%`;
    conditions.push(
      `(namespace_path = ${params.add(filter.namespacePath)} OR namespace_path LIKE ${params.add(like)})`,
    );
  }
  if (filter.tiers && filter.tiers.length > 0) {
    conditions.push(`tier = ANY(${params.add(filter.tiers)}::text[])`);
  }
  if (filter.tags && filter.tags.length > 0) {
    conditions.push(`tags @> ${params.add(filter.tags)}::text[]`);
  }
  if (filter.since) conditions.push(`observed_at >= ${params.add(filter.since)}`);
  if (filter.until) conditions.push(`observed_at < ${params.add(filter.until)}`);
  if (filter.asOf) {
    const asOf = params.add(filter.asOf);
    conditions.push(
      `valid_from <= ${asOf}`,
      `(invalidated_at IS NULL OR invalidated_at > ${asOf})`,
    );
  } else if (!filter.includeInvalidated) {
    conditions.push('invalidated_at IS NULL');
  }
  for (const [key, condition] of Object.entries(filter.value ?? {})) {
    conditions.push(valueCondition(key, condition, params));
  }
  return conditions.length > 0 ? conditions.join(' AND ') : 'TRUE';
}

const COMPARISONS: ReadonlyMap<string, string> = new Map([
  ['$gt', '>'],
  ['$gte', '>='],
  ['$lt', '<'],
  ['$lte', '<='],
]);

function invalidFilter(key: string, problem: string): VeridexError {
  return new VeridexError(
    'input_invalid',
    `Memory filter on ${JSON.stringify(key.slice(0, 80))} ${problem}.`,
    { details: { field: key.slice(0, 80) } },
  );
}

function valueCondition(key: string, condition: unknown, params: SqlParams): string {
  const field = `value -> ${params.add(key)}`;
  const json = (value: unknown) => `${params.add(JSON.stringify(value ?? null))}::jsonb`;
  const keys =
    typeof condition === 'object' && condition !== null && !Array.isArray(condition)
      ? Object.keys(condition)
      : [];
  const operators = keys.filter((key) => key.startsWith('$'));
  if (operators.length === 0) return `${field} = ${json(condition)}`;
  // A filter is caller input: anything but a known operator with a fitting operand is the
  // caller's mistake (input_invalid), never a query that fails or silently matches nothing.
  if (operators.length !== keys.length) {
    throw invalidFilter(
      key,
      'mixes operators with plain fields; use { $eq: {...} } to match an object',
    );
  }
  const parts = Object.entries(condition as Record<string, unknown>).map(([operator, operand]) => {
    if (operand === undefined) throw invalidFilter(key, `has no operand for ${operator}`);
    if (operator === '$eq') return `${field} = ${json(operand)}`;
    if (operator === '$ne') return `${field} IS DISTINCT FROM ${json(operand)}`;
    if (operator === '$in' || operator === '$nin') {
      if (!Array.isArray(operand)) throw invalidFilter(key, `needs an array for ${operator}`);
      const list = operand.map((item) => JSON.stringify(item ?? null));
      const match = `coalesce(${field} = ANY(${params.add(list)}::jsonb[]), false)`;
      return operator === '$in' ? match : `NOT ${match}`;
    }
    const comparison = COMPARISONS.get(operator);
    if (!comparison) {
      throw invalidFilter(
        key,
        `uses the unknown operator ${JSON.stringify(operator.slice(0, 40))}; supported: $eq, $ne, $in, $nin, $gt, $gte, $lt, $lte`,
      );
    }
    if (typeof operand !== 'number' || !Number.isFinite(operand)) {
      throw invalidFilter(key, `needs a finite number for ${operator}`);
    }
    return `(jsonb_typeof(${field}) = 'number' AND (${field})::text::numeric ${comparison} ${params.add(operand)})`;
  });
  return `(${parts.join(' AND ')})`;
}

/** Lexical candidates: full-text match of a tsquery over stemmed lexemes, best `ts_rank` first. */
export function lexicalCandidates(filterSql: string, tsQuery: string, limit: string): string {
  return `SELECT ${RECORD_COLUMNS}, ts_rank(search_vector, q) AS lexical_score
    FROM veridex_memory_records, CAST(${tsQuery} AS tsquery) AS q
    WHERE search_vector @@ q AND ${filterSql}
    ORDER BY lexical_score DESC, id LIMIT ${limit}`;
}

/**
 * Vector candidates with pgvector: exact cosine distance over the filtered (and probed) rows.
 * The sort carries only ids (narrow tuples); full rows are fetched for the winners.
 */
export function pgvectorCandidates(
  vector: VectorSql,
  filterSql: string,
  queryVector: string,
  limit: string,
): string {
  return `WITH nearest AS (
      SELECT id, 1 - (embedding ${vector.cosineDistance} ${queryVector}::${vector.type}) AS similarity
      FROM veridex_memory_records
      WHERE embedding IS NOT NULL AND ${filterSql}
      ORDER BY similarity DESC, id LIMIT ${limit})
    SELECT ${prefixed('r')}, nearest.similarity
    FROM nearest JOIN veridex_memory_records AS r USING (id)
    ORDER BY nearest.similarity DESC, r.id`;
}

/** Vector pre-candidates without pgvector: nearest sketches by Hamming distance. */
export function sketchCandidates(filterSql: string, querySketch: string, limit: string): string {
  return `WITH nearest AS (
      SELECT id FROM veridex_memory_records
      WHERE sketch IS NOT NULL AND ${filterSql}
      ORDER BY bit_count(sketch # ${querySketch}::bit varying), id LIMIT ${limit})
    SELECT ${prefixed('r')}, r.embedding_bytes
    FROM nearest JOIN veridex_memory_records AS r USING (id)`;
}

function prefixed(alias: string): string {
  return RECORD_COLUMNS.split(',')
    .map((column) => `${alias}.${column.trim()}`)
    .join(', ');
}

/** The inverted-file restriction: the probed lists, plus rows filed before training. */
export function probedListsSql(probes: string): string {
  return `(cluster = ANY(${probes}::int[]) OR cluster IS NULL)`;
}

/** Counts up to `limit` rows matching the filter (cheap "is this population small?" test). */
export function boundedCount(filterSql: string, limit: string): string {
  return `SELECT count(*)::int AS count FROM (SELECT 1 FROM veridex_memory_records
    WHERE ${filterSql} LIMIT ${limit}) AS population`;
}

/** Listing without a query (BaseStore search without `query`). */
export function listRecords(filterSql: string, limit: string, offset: string): string {
  return `SELECT ${RECORD_COLUMNS} FROM veridex_memory_records WHERE ${filterSql}
    ORDER BY lineage_created_at, namespace_path, key LIMIT ${limit} OFFSET ${offset}`;
}

/** Every namespace that holds a current record. */
export const LIST_NAMESPACES = `SELECT DISTINCT namespace FROM veridex_memory_records
  WHERE invalidated_at IS NULL`;

/** Rows in the records table (to decide when to train the inverted file). */
export const COUNT_RECORDS = 'SELECT count(*)::int AS count FROM veridex_memory_records';

/** The centroids of the newest generation, by list number. */
export const LATEST_CENTROIDS = `SELECT generation, cluster, dimensions, centroid FROM veridex_memory_centroids
  WHERE generation = (SELECT max(generation) FROM veridex_memory_centroids) ORDER BY cluster`;

/** The newest centroid generation (NULL before the first training). */
export const CENTROID_GENERATION =
  'SELECT max(generation) AS generation FROM veridex_memory_centroids';

/** Stores one generation of centroids (list numbers and hex float32 bytes). */
export const INSERT_CENTROIDS = `INSERT INTO veridex_memory_centroids (generation, cluster, dimensions, centroid)
  SELECT $1, cluster, $2, decode(hex, 'hex') FROM unnest($3::int[], $4::text[]) AS c(cluster, hex)`;

/**
 * A page of stored embeddings after id `$1` (ordered by id, a pseudo-random order: ids are
 * hashes): float32 bytes in fallback mode, pgvector text where the vector column holds them.
 */
export function pageEmbeddings(vector: VectorSql | undefined): string {
  const column = vector ? 'embedding::text AS embedding' : 'embedding_bytes AS embedding';
  const present = vector ? 'embedding' : 'embedding_bytes';
  return `SELECT id, ${column} FROM veridex_memory_records
    WHERE ${present} IS NOT NULL AND id > $1 ORDER BY id LIMIT $2`;
}

/** Files records (ids) under lists (numbers). */
export const ASSIGN_CLUSTERS = `UPDATE veridex_memory_records AS r SET cluster = a.cluster
  FROM unnest($1::text[], $2::int[]) AS a(id, cluster) WHERE r.id = a.id`;

/** Serialises quota reservations of one thread. */
export const LOCK_QUOTA = `SELECT pg_advisory_xact_lock(hashtext('veridex.memory.quota:' || $1))`;

/** A row when this write id already holds a reservation in the thread. */
export const QUOTA_HAS =
  'SELECT 1 FROM veridex_memory_quota_uses WHERE thread_id = $1 AND write_id = $2';

/** Reservations used by a thread. */
export const QUOTA_COUNT =
  'SELECT count(*)::int AS count FROM veridex_memory_quota_uses WHERE thread_id = $1';

/** Reserves one unit of a thread's quota for a write id. */
export const QUOTA_RESERVE = `INSERT INTO veridex_memory_quota_uses (thread_id, write_id, reserved_at)
  VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`;

/** Records by id that also match a filter (linked records stay inside the caller's namespace). */
export function recordsByIds(filterSql: string, ids: string): string {
  return `SELECT ${RECORD_COLUMNS} FROM veridex_memory_records WHERE id = ANY(${ids}::text[]) AND ${filterSql}`;
}

/** The lexemes of a query (english configuration) with their estimated document frequency. */
export const QUERY_LEXEMES = `SELECT lexeme, coalesce(t.frequency, 0)::int AS frequency
  FROM unnest(tsvector_to_array(to_tsvector('english', $1))) AS lexeme
  LEFT JOIN veridex_memory_terms AS t USING (lexeme)`;

/** Counts the lexemes of newly inserted records (sorted, so concurrent writers lock in one order). */
export const COUNT_TERMS = `INSERT INTO veridex_memory_terms (lexeme, frequency)
  SELECT lexeme, count(*) FROM veridex_memory_records AS r,
    unnest(tsvector_to_array(r.search_vector)) AS lexeme
  WHERE r.id = ANY($1::text[]) GROUP BY lexeme ORDER BY lexeme
  ON CONFLICT (lexeme) DO UPDATE SET frequency = veridex_memory_terms.frequency + EXCLUDED.frequency`;

/** Removes dead row versions (re-filing at training updates every row) and refreshes statistics. */
export const VACUUM_RECORDS = 'VACUUM (ANALYZE) veridex_memory_records';

/** Invalidates the current version of a key (BaseStore delete, explicit forget). */
export const INVALIDATE_KEY = `UPDATE veridex_memory_records
  SET invalidated_at = $3, invalidation_reason = $4
  WHERE namespace_path = $1 AND key = $2 AND invalidated_at IS NULL
  RETURNING ${RECORD_COLUMNS}`;

/** Current versions of (namespace_path, key) pairs. */
export const CURRENT_OF_KEYS = `SELECT ${RECORD_COLUMNS} FROM veridex_memory_records AS r
  JOIN unnest($1::text[], $2::text[]) AS k(namespace_path, key) USING (namespace_path, key)
  WHERE r.invalidated_at IS NULL`;
