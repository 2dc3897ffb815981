// All SQL of the checkpointer. Tables come from src/db/migrations/0002_checkpointer.sql;
// names are unqualified because the database handle sets search_path to its schema.
//
// The hot statements (put, writes, get, list, delta history) are installed by `setup()` as PL/pgSQL
// functions: PL/pgSQL keeps each statement's plan for the session, and planning these
// CTEs costs more than running them. Function names end in a hash of their definition, so
// a changed statement is a new function and two library versions can share a schema.
import { createHash } from 'node:crypto';

/** The columns every read returns (see {@link READ_TAIL}). */
const READ_COLUMNS = `kind int, ordering bigint, thread_id text, checkpoint_ns text,
  checkpoint_id text, name text, text1 text, text2 text, text3 text, blob bytea, body text,
  idx int, expected int, actual int`;

/** A PL/pgSQL function wrapping one statement, and the SQL that calls it. */
export interface StoredFunction {
  name: string;
  /** `CREATE FUNCTION …`, run once per schema by `setup()`. */
  definition: string;
  /** The call, with `$1…` parameters cast to the function's argument types. */
  call: string;
}

/**
 * Writers hold this lock (shared, keyed by thread id $1) for their transaction; `prune` and
 * `deleteThread` take it exclusively. Inside a function each statement gets a fresh snapshot,
 * so a writer's statement runs after the lock is granted and sees any prune that finished.
 */
const THREAD_WRITE_LOCK = `PERFORM pg_advisory_xact_lock_shared(hashtext('veridex.checkpoint'), hashtext($1))`;

/** The exclusive form of the per-thread lock, for prune and delete: $1 thread_id. */
export const LOCK_THREAD_EXCLUSIVE = `SELECT pg_advisory_xact_lock(hashtext('veridex.checkpoint'), hashtext($1))`;

function storedFunction(
  base: string,
  parameterTypes: readonly string[],
  returns: 'void' | 'rows',
  statement: string,
): StoredFunction {
  // Writers take one more argument, last: whether this transaction waits for its WAL to be
  // flushed (see `synchronousCommit` in PostgresCheckpointerOptions). A local setting lasts
  // until the end of the caller's transaction, so it governs the commit that follows.
  const argumentTypes = returns === 'void' ? [...parameterTypes, 'bool'] : parameterTypes;
  const body =
    returns === 'void'
      ? `BEGIN
IF NOT $${argumentTypes.length} THEN PERFORM set_config('synchronous_commit', 'off', true); END IF;
${THREAD_WRITE_LOCK};
${statement};
END`
      : `#variable_conflict use_column\nBEGIN\nRETURN QUERY ${statement};\nEND`;
  return defineFunction(base, argumentTypes, returns, body);
}

function defineFunction(
  base: string,
  argumentTypes: readonly string[],
  returns: 'void' | 'rows',
  body: string,
): StoredFunction {
  const returnType = returns === 'rows' ? `TABLE (${READ_COLUMNS})` : returns;
  // A custom plan per call would re-plan every time (array sizes make the generic plan look
  // dearer to the planner than it is), which is the cost these functions exist to avoid.
  // The generic plan is made once per session, often while the tables are still small; every
  // statement here looks rows up by key, so index access is pinned rather than left to
  // statistics that will soon be stale. JIT compiles per execution and never pays off here.
  const text = `(${argumentTypes.join(', ')}) RETURNS ${returnType} LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET jit = off
AS $veridex$\n${body}\n$veridex$`;
  const name = `${base}_${createHash('sha256').update(text).digest('hex').slice(0, 10)}`;
  const args = argumentTypes.map((type, index) => `$${index + 1}::${type}`).join(', ');
  return {
    name,
    definition: `CREATE FUNCTION ${name}${text}`,
    call:
      returns === 'rows' ? `SELECT * FROM ${name}(${args})` : `SELECT ${name}(${args}) AS result`,
  };
}

/** Which of `names` exist in the current schema: $1 the names. */
export const EXISTING_FUNCTIONS = `
SELECT p.proname AS name FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = current_schema() AND p.proname = ANY($1::text[])`;

/** Serialises function installation per schema (CREATE FUNCTION is not concurrency-safe). */
export const LOCK_FUNCTION_INSTALL = `SELECT pg_advisory_xact_lock(hashtext('veridex.checkpointer:' || current_schema()))`;

/**
 * Stores one checkpoint: upserts the thread row (count, latest hash), the blobs, sequence
 * items and elements of the values it writes, and the checkpoint row, whose references for
 * carried-over channels are copied from its parent when the parent has the same version.
 *
 * $1 thread_id, $2 checkpoint_ns, $3 checkpoint_id, $4 parent checkpoint_id, $5 checkpoint
 * JSON, $6 metadata JSON, $7 content digest, $8/$9 new channels and their references,
 * $10/$11 carried channels and versions, $12/$13 blobs, $14/$15 elements, $16-$18 sequence
 * items, $19/$20 sequence prefixes that must already exist.
 *
 * A missing prefix (another process pruned the sequence) aborts the statement with an error
 * mentioning `veridex_sequence_prefix_missing`, raised by casting a non-constant string so
 * the planner cannot fold it; the caller retries with fresh sequences.
 */
const PUT_CHECKPOINT_STATEMENT = `
WITH existing AS (
  SELECT thread_key FROM veridex_checkpoint_threads WHERE thread_id = $1
),
parent AS (
  SELECT c.hash, c.checkpoint::jsonb -> 'channel_versions' AS versions, c.value_channels, c.value_refs
  FROM veridex_checkpoints c JOIN existing e ON c.thread_key = e.thread_key
  WHERE c.checkpoint_ns = $2 AND c.checkpoint_id = $4
),
link AS (
  SELECT p.hash AS parent_hash, sha256(coalesce(p.hash, '\\x'::bytea) || $7) AS hash
  FROM (SELECT 1) AS one LEFT JOIN parent p ON true
),
thread AS (
  INSERT INTO veridex_checkpoint_threads AS t
    (thread_id, checkpoint_count, latest_checkpoint_ns, latest_checkpoint_id, latest_hash)
  SELECT $1, 1, $2, $3, link.hash FROM link
  ON CONFLICT (thread_id) DO UPDATE SET
    checkpoint_count = t.checkpoint_count + 1,
    latest_checkpoint_ns = EXCLUDED.latest_checkpoint_ns,
    latest_checkpoint_id = EXCLUDED.latest_checkpoint_id,
    latest_hash = EXCLUDED.latest_hash
  RETURNING thread_key
),
refs AS (
  SELECT 0 AS source, n.ordinality, n.channel, n.ref
  FROM unnest($8, $9) WITH ORDINALITY AS n(channel, ref, ordinality)
  UNION ALL
  SELECT 1, c.ordinality, c.channel, p.value_refs[pc.position]
  FROM unnest($10, $11) WITH ORDINALITY AS c(channel, version, ordinality)
  JOIN parent p ON (p.versions ->> c.channel) = c.version
  JOIN LATERAL unnest(p.value_channels) WITH ORDINALITY AS pc(channel, position)
    ON pc.channel = c.channel
),
blobs AS (
  INSERT INTO veridex_checkpoint_blobs (thread_key, digest, blob)
  SELECT t.thread_key, b.digest, b.blob FROM thread t, unnest($12, $13) AS b(digest, blob)
  ON CONFLICT DO NOTHING
),
elements AS (
  INSERT INTO veridex_checkpoint_elements (thread_key, digest, body)
  SELECT t.thread_key, e.digest, e.body FROM thread t, unnest($14, $15) AS e(digest, body)
  ON CONFLICT DO NOTHING
),
items AS (
  INSERT INTO veridex_checkpoint_items (thread_key, sequence_id, position, element_digest)
  SELECT t.thread_key, i.sequence_id, i.position, i.digest
  FROM thread t, unnest($16, $17, $18) AS i(sequence_id, position, digest)
),
guard AS (
  SELECT coalesce(bool_and(EXISTS (
    SELECT 1 FROM veridex_checkpoint_items x JOIN existing e ON x.thread_key = e.thread_key
    WHERE x.sequence_id = g.sequence_id AND x.position = g.length - 1
  )), true) AS prefixes_exist
  FROM unnest($19, $20) AS g(sequence_id, length)
)
INSERT INTO veridex_checkpoints AS c (thread_key, checkpoint_ns, checkpoint_id,
  parent_checkpoint_id, checkpoint, metadata, value_channels, value_refs, new_value_count,
  parent_hash, hash)
SELECT t.thread_key, $2, $3, $4, $5, $6::jsonb,
  coalesce((SELECT array_agg(channel ORDER BY source, ordinality) FROM refs), '{}'),
  coalesce((SELECT array_agg(ref ORDER BY source, ordinality) FROM refs), '{}'),
  cardinality($8) + CASE WHEN guard.prefixes_exist THEN 0
    ELSE ('veridex_sequence_prefix_missing:' || guard.prefixes_exist::text)::int END,
  link.parent_hash, link.hash
FROM thread t, link, guard
ON CONFLICT (thread_key, checkpoint_ns, checkpoint_id) DO UPDATE SET
  parent_checkpoint_id = EXCLUDED.parent_checkpoint_id,
  checkpoint = EXCLUDED.checkpoint,
  metadata = EXCLUDED.metadata,
  value_channels = EXCLUDED.value_channels,
  value_refs = EXCLUDED.value_refs,
  new_value_count = EXCLUDED.new_value_count,
  parent_hash = EXCLUDED.parent_hash,
  hash = EXCLUDED.hash,
  repeated_puts = c.repeated_puts + 1`;

/** See {@link PUT_CHECKPOINT_STATEMENT}. */
export const PUT_CHECKPOINT = storedFunction(
  'veridex_checkpoint_put',
  [
    'text',
    'text',
    'text',
    'text',
    'text',
    'text',
    'bytea',
    'text[]',
    'bytea[]',
    'text[]',
    'text[]',
    'bytea[]',
    'bytea[]',
    'bytea[]',
    'text[]',
    'int8[]',
    'int4[]',
    'bytea[]',
    'int8[]',
    'int4[]',
  ],
  'void',
  PUT_CHECKPOINT_STATEMENT,
);

/** Marker in the error raised by the put statement when a sequence prefix is gone. */
export const SEQUENCE_PREFIX_MISSING = 'veridex_sequence_prefix_missing';

/** The primary key whose violation means another writer appended to the same sequence. */
export const SEQUENCE_ITEMS_KEY = 'veridex_checkpoint_items_pkey';

const WRITE_COLUMNS = `thread_key, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel,
    type, blob, element_digests, hash`;

/**
 * Stores the writes of one or more `putWrites` calls for thread $1 in one statement (calls
 * that arrive while the previous statement for the thread runs are batched: one commit for
 * all of them). Each row says whether it may replace an existing row: special writes
 * (errors, interrupts) do, as in the official saver; regular writes already present are kept,
 * since a re-run task must not change what was recorded. Creates the thread row if needed.
 *
 * $2-$12 per row: checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob,
 * element digests, hash, replace; $13/$14 list elements.
 */
export const PUT_WRITES = storedFunction(
  'veridex_checkpoint_put_writes',
  [
    'text',
    'text[]',
    'text[]',
    'text[]',
    'text[]',
    'int4[]',
    'text[]',
    'text[]',
    'bytea[]',
    'bytea[]',
    'bytea[]',
    'bool[]',
    'bytea[]',
    'text[]',
  ],
  'void',
  `
WITH existing AS (
  SELECT thread_key FROM veridex_checkpoint_threads WHERE thread_id = $1
),
created AS (
  -- Only for a thread this statement could not see yet. If another connection is creating
  -- it right now, DO UPDATE waits for that and returns its key (DO NOTHING would return none).
  INSERT INTO veridex_checkpoint_threads AS t (thread_id)
  SELECT $1 WHERE NOT EXISTS (SELECT 1 FROM existing)
  ON CONFLICT (thread_id) DO UPDATE SET thread_id = t.thread_id
  RETURNING thread_key
),
thread AS (
  SELECT thread_key FROM existing UNION ALL SELECT thread_key FROM created
),
elements AS (
  INSERT INTO veridex_checkpoint_elements (thread_key, digest, body)
  SELECT t.thread_key, e.digest, e.body FROM thread t, unnest($13, $14) AS e(digest, body)
  ON CONFLICT DO NOTHING
),
incoming AS (
  SELECT * FROM unnest($2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
    AS w(checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob,
      element_digests, hash, replace)
),
kept AS (
  INSERT INTO veridex_checkpoint_writes (${WRITE_COLUMNS})
  SELECT t.thread_key, w.checkpoint_ns, w.checkpoint_id, w.task_id, w.task_path, w.idx,
    w.channel, w.type, w.blob, w.element_digests, w.hash
  FROM thread t, incoming w WHERE NOT w.replace
  ON CONFLICT (thread_key, checkpoint_ns, checkpoint_id, task_id, idx) DO NOTHING
)
-- The main statement (PL/pgSQL runs a data-modifying WITH only as a plain command).
INSERT INTO veridex_checkpoint_writes (${WRITE_COLUMNS})
SELECT t.thread_key, w.checkpoint_ns, w.checkpoint_id, w.task_id, w.task_path, w.idx,
  w.channel, w.type, w.blob, w.element_digests, w.hash
FROM thread t, incoming w WHERE w.replace
ON CONFLICT (thread_key, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET
  task_path = EXCLUDED.task_path, channel = EXCLUDED.channel, type = EXCLUDED.type,
  blob = EXCLUDED.blob, element_digests = EXCLUDED.element_digests, hash = EXCLUDED.hash`,
);

/** Deletes everything stored for thread $1 in one statement. */
export const DELETE_THREAD = `
WITH thread AS (
  DELETE FROM veridex_checkpoint_threads WHERE thread_id = $1 RETURNING thread_key
),
checkpoints AS (
  DELETE FROM veridex_checkpoints WHERE thread_key IN (SELECT thread_key FROM thread)
),
blobs AS (
  DELETE FROM veridex_checkpoint_blobs WHERE thread_key IN (SELECT thread_key FROM thread)
),
items AS (
  DELETE FROM veridex_checkpoint_items WHERE thread_key IN (SELECT thread_key FROM thread)
),
elements AS (
  DELETE FROM veridex_checkpoint_elements WHERE thread_key IN (SELECT thread_key FROM thread)
),
writes AS (
  DELETE FROM veridex_checkpoint_writes WHERE thread_key IN (SELECT thread_key FROM thread)
),
pruned AS (
  DELETE FROM veridex_checkpoint_pruned WHERE thread_key IN (SELECT thread_key FROM thread)
)
SELECT count(*)::int AS deleted FROM thread`;

// Reassembles a list from its elements: `[` + element texts joined by `,` + `]`, and how many
// elements were found (a row edited or deleted outside the checkpointer shows as a shortfall).
const ASSEMBLE_SEQUENCE = `
  SELECT '[' || string_agg(e.body, ',' ORDER BY i.position) || ']' AS body, count(e.body)::int AS actual
  FROM veridex_checkpoint_items i
  LEFT JOIN veridex_checkpoint_elements e ON e.thread_key = i.thread_key AND e.digest = i.element_digest
  WHERE i.thread_key = r.thread_key AND i.sequence_id = r.sequence_id AND i.position < r.sequence_length`;

const ASSEMBLE_MANIFEST = `
  SELECT '[' || string_agg(b.body, ',' ORDER BY g.position) || ']' AS body, count(b.body)::int AS actual
  FROM unnest(ARRAY(SELECT generate_series(0, length(w.element_digests) / 32 - 1))) AS g(position)
  LEFT JOIN LATERAL (
    -- One index lookup per element (a join would hash every element of the thread).
    SELECT e.body FROM veridex_checkpoint_elements e
    WHERE e.thread_key = w.thread_key
      AND e.digest = substring(w.element_digests FROM g.position * 32 + 1 FOR 32)
    OFFSET 0
  ) b ON true`;

// The pending writes of each checkpoint of `target`, by index. OFFSET 0 keeps the planner
// from flattening this into a hash join that scans every write of every thread.
const TARGET_WRITES = `
CROSS JOIN LATERAL (
  SELECT * FROM veridex_checkpoint_writes x
  WHERE x.thread_key = t.thread_key AND x.checkpoint_ns = t.checkpoint_ns
    AND x.checkpoint_id = t.checkpoint_id
  OFFSET 0
) w`;

// Given a CTE `wanted(thread_key, ref)` of distinct value references, a CTE `stored` with
// one row per reference: its serde type and either the bytes (`blob`) or a reassembled list
// (`body`), with `expected`/`actual` part counts that differ when rows went missing.
const RESOLVE_REFS = `
decoded AS (
  SELECT d.thread_key, d.ref, get_byte(d.ref, 0) AS kind,
    convert_from(substring(d.ref FROM 3 FOR get_byte(d.ref, 1)), 'UTF8') AS type,
    substring(d.ref FROM 3 + get_byte(d.ref, 1)) AS payload
  FROM wanted AS d
),
resolved AS (
  SELECT d.*,
    CASE WHEN d.kind = 2 THEN ('x' || encode(substring(d.payload FROM 1 FOR 8), 'hex'))::bit(64)::bigint END AS sequence_id,
    CASE WHEN d.kind = 2 THEN ('x' || encode(substring(d.payload FROM 9 FOR 4), 'hex'))::bit(32)::int END AS sequence_length
  FROM decoded d
),
stored AS (
  SELECT r.ref, r.type, CASE r.kind WHEN 1 THEN r.payload WHEN 3 THEN b.blob END AS blob, s.body,
    CASE r.kind WHEN 1 THEN NULL WHEN 2 THEN r.sequence_length WHEN 3 THEN 1 ELSE -1 END AS expected,
    CASE r.kind WHEN 2 THEN s.actual WHEN 3 THEN (b.blob IS NOT NULL)::int ELSE 0 END AS actual
  FROM resolved r
  LEFT JOIN veridex_checkpoint_blobs b
    ON r.kind = 3 AND b.thread_key = r.thread_key AND b.digest = r.payload
  LEFT JOIN LATERAL (${ASSEMBLE_SEQUENCE}
  ) s ON r.kind = 2
)`;

// The shared tail of every read: given a CTE `target` of checkpoint rows (with thread_id and
// an `ordering`), one row per checkpoint (kind 0), per value reference (kind 1), per distinct
// referenced value (kind 2), per pending write (kind 3) and per list element (kind 4). Plain
// columns only. A list value (kind 2 with its sequence id in `name` and length in `expected`)
// is not reassembled here: each sequence's elements are sent once (kind 4, by position) and
// every version of the list is its first `expected` elements, so a page of 25 versions of a
// growing list costs its elements once, not 25 times.
const READ_TAIL = `,
refs AS (
  SELECT t.thread_key, t.thread_id, t.checkpoint_ns, t.checkpoint_id, r.channel, r.ref
  FROM target t, unnest(t.value_channels, t.value_refs) AS r(channel, ref)
),
decoded AS (
  SELECT d.thread_key, d.ref, get_byte(d.ref, 0) AS kind,
    convert_from(substring(d.ref FROM 3 FOR get_byte(d.ref, 1)), 'UTF8') AS type,
    substring(d.ref FROM 3 + get_byte(d.ref, 1)) AS payload
  FROM (SELECT DISTINCT thread_key, ref FROM refs) AS d
),
resolved AS (
  SELECT d.*,
    CASE WHEN d.kind = 2 THEN ('x' || encode(substring(d.payload FROM 1 FOR 8), 'hex'))::bit(64)::bigint END AS sequence_id,
    CASE WHEN d.kind = 2 THEN ('x' || encode(substring(d.payload FROM 9 FOR 4), 'hex'))::bit(32)::int END AS sequence_length
  FROM decoded d
),
sequences AS (
  SELECT thread_key, sequence_id, max(sequence_length) AS length
  FROM resolved WHERE kind = 2 GROUP BY thread_key, sequence_id
)
SELECT 0 AS kind, t.ordering, t.thread_id, t.checkpoint_ns, t.checkpoint_id,
  t.parent_checkpoint_id AS name, t.checkpoint AS text1, t.metadata::text AS text2,
  NULL::text AS text3, NULL::bytea AS blob, NULL::text AS body, NULL::int AS idx,
  NULL::int AS expected, NULL::int AS actual
FROM target t
UNION ALL
SELECT 1, NULL, r.thread_id, r.checkpoint_ns, r.checkpoint_id, r.channel, encode(r.ref, 'hex'),
  NULL, NULL, NULL, NULL, NULL, NULL, NULL
FROM refs r
UNION ALL
SELECT 2, NULL, NULL, NULL, NULL, r.sequence_id::text, encode(r.ref, 'hex'), r.type, NULL,
  CASE r.kind WHEN 1 THEN r.payload WHEN 3 THEN b.blob END, NULL, NULL,
  CASE r.kind WHEN 1 THEN NULL WHEN 2 THEN r.sequence_length WHEN 3 THEN 1 ELSE -1 END,
  CASE r.kind WHEN 2 THEN r.sequence_length WHEN 3 THEN (b.blob IS NOT NULL)::int ELSE 0 END
FROM resolved r
LEFT JOIN veridex_checkpoint_blobs b
  ON r.kind = 3 AND b.thread_key = r.thread_key AND b.digest = r.payload
UNION ALL
SELECT 3, NULL, t.thread_id, t.checkpoint_ns, t.checkpoint_id, w.task_id, w.channel, w.type,
  w.task_path, w.blob, m.body, w.idx, length(w.element_digests) / 32, m.actual
FROM target t${TARGET_WRITES}
LEFT JOIN LATERAL (${ASSEMBLE_MANIFEST}
) m ON w.element_digests IS NOT NULL
UNION ALL
SELECT 4, i.position, NULL, NULL, NULL, s.sequence_id::text, NULL, NULL, NULL, NULL, e.body,
  NULL, NULL, NULL
FROM sequences s
JOIN veridex_checkpoint_items i ON i.thread_key = s.thread_key AND i.sequence_id = s.sequence_id
  AND i.position < s.length
LEFT JOIN veridex_checkpoint_elements e ON e.thread_key = i.thread_key AND e.digest = i.element_digest
ORDER BY 1, 2`;

/**
 * The inputs of `getDeltaChannelHistory` in one statement: walks the parent chain from the
 * target's parent while some requested channel has no stored value yet, and returns each
 * walked checkpoint's writes to still-unseeded channels (kind 3) and the values that seed
 * channels (kind 2, `name` = channel); `ordering` is the depth (1 = the target's parent).
 * $1 thread_id, $2 checkpoint_ns, $3 checkpoint_id ('' for the latest), $4 channels.
 */
export const DELTA_CHANNEL_HISTORY = storedFunction(
  'veridex_checkpoint_delta_history',
  ['text', 'text', 'text', 'text[]'],
  'rows',
  `
WITH RECURSIVE thread AS (
  SELECT thread_key FROM veridex_checkpoint_threads WHERE thread_id = $1
),
target AS (
  SELECT c.parent_checkpoint_id FROM veridex_checkpoints c JOIN thread t ON c.thread_key = t.thread_key
  WHERE c.checkpoint_ns = $2 AND ($3 = '' OR c.checkpoint_id = $3)
  ORDER BY c.checkpoint_id DESC
  LIMIT 1
),
walk (depth, thread_key, checkpoint_id, parent_checkpoint_id, value_channels, value_refs, remaining) AS (
  SELECT 1, c.thread_key, c.checkpoint_id, c.parent_checkpoint_id, c.value_channels, c.value_refs, $4
  FROM target g
  JOIN thread t ON true
  JOIN veridex_checkpoints c ON c.thread_key = t.thread_key AND c.checkpoint_ns = $2
    AND c.checkpoint_id = g.parent_checkpoint_id
  UNION ALL
  SELECT k.depth + 1, c.thread_key, c.checkpoint_id, c.parent_checkpoint_id, c.value_channels, c.value_refs,
    ARRAY(SELECT x FROM unnest(k.remaining) AS x WHERE x <> ALL (k.value_channels))
  FROM walk k
  JOIN veridex_checkpoints c ON c.thread_key = k.thread_key AND c.checkpoint_ns = $2
    AND c.checkpoint_id = k.parent_checkpoint_id
  WHERE k.depth < 1000000
    AND EXISTS (SELECT 1 FROM unnest(k.remaining) AS x WHERE x <> ALL (k.value_channels))
),
seeds AS (
  SELECT k.depth, k.thread_key, v.channel, v.ref
  FROM walk k, unnest(k.value_channels, k.value_refs) AS v(channel, ref)
  WHERE v.channel = ANY (k.remaining)
),
wanted AS (
  SELECT DISTINCT thread_key, ref FROM seeds
),${RESOLVE_REFS}
SELECT 2 AS kind, d.depth::bigint AS ordering, NULL::text AS thread_id, NULL::text AS checkpoint_ns,
  NULL::text AS checkpoint_id, d.channel AS name, NULL::text AS text1, s.type AS text2,
  NULL::text AS text3, s.blob, s.body, NULL::int AS idx, s.expected, s.actual
FROM seeds d JOIN stored s ON s.ref = d.ref
UNION ALL
SELECT 3, k.depth, NULL, NULL, NULL, w.task_id, w.channel, w.type, w.task_path, w.blob,
  m.body, w.idx,
  length(w.element_digests) / 32, m.actual
FROM walk k
CROSS JOIN LATERAL (
  SELECT * FROM veridex_checkpoint_writes x
  WHERE x.thread_key = k.thread_key AND x.checkpoint_ns = $2 AND x.checkpoint_id = k.checkpoint_id
    AND x.channel = ANY (k.remaining)
  OFFSET 0
) w
LEFT JOIN LATERAL (${ASSEMBLE_MANIFEST}
) m ON w.element_digests IS NOT NULL`,
);

const TARGET_COLUMNS = `c.thread_key, th.thread_id, c.checkpoint_ns, c.checkpoint_id,
  c.parent_checkpoint_id, c.checkpoint, c.metadata, c.value_channels, c.value_refs`;

/** Marks the first row of {@link GET_CHECKPOINT}: the token of the checkpoint it found. */
export const KIND_TOKEN = 5;

/**
 * One checkpoint, unless the caller already has it. $1 thread_id, $2 checkpoint_ns,
 * $3 checkpoint_id ('' for the latest), $4-$6 the token of the tuple the caller has cached
 * (checkpoint_id, chain hash, writes digest; nulls for none).
 *
 * Returns no rows when there is no such checkpoint. Otherwise the first row (kind
 * {@link KIND_TOKEN}) is the token of the checkpoint found: checkpoint_id, chain hash in
 * `blob`, writes digest (SHA-256 of its writes' hashes in byte order) as hex in `text1`, and
 * `idx` 1 when it equals the caller's. Only then does the read end there; otherwise the read
 * tail follows. The token is taken first, so if a write lands between the two statements the
 * cached token is older than the rows and the next call reads again.
 */
export const GET_CHECKPOINT = defineFunction(
  'veridex_checkpoint_get_unless',
  ['text', 'text', 'text', 'text', 'bytea', 'bytea'],
  'rows',
  `#variable_conflict use_column
DECLARE
  found_key bigint;
  found_id text;
  found_hash bytea;
  found_writes bytea;
  unchanged bool;
BEGIN
  IF $3 = '' THEN
    SELECT c.thread_key, c.checkpoint_id, c.hash INTO found_key, found_id, found_hash
    FROM veridex_checkpoint_threads th
    JOIN veridex_checkpoints c ON c.thread_key = th.thread_key
    WHERE th.thread_id = $1 AND c.checkpoint_ns = $2
    ORDER BY c.checkpoint_id DESC
    LIMIT 1;
  ELSE
    SELECT c.thread_key, c.checkpoint_id, c.hash INTO found_key, found_id, found_hash
    FROM veridex_checkpoint_threads th
    JOIN veridex_checkpoints c ON c.thread_key = th.thread_key
    WHERE th.thread_id = $1 AND c.checkpoint_ns = $2 AND c.checkpoint_id = $3;
  END IF;
  IF found_id IS NULL THEN
    RETURN;
  END IF;
  SELECT sha256(coalesce(string_agg(w.hash, ''::bytea ORDER BY w.hash), ''::bytea))
  INTO found_writes
  FROM veridex_checkpoint_writes w
  WHERE w.thread_key = found_key AND w.checkpoint_ns = $2 AND w.checkpoint_id = found_id;
  unchanged := coalesce(found_id = $4 AND found_hash = $5 AND found_writes = $6, false);
  RETURN QUERY SELECT ${KIND_TOKEN}, NULL::bigint, NULL::text, NULL::text, found_id, NULL::text,
    encode(found_writes, 'hex'), NULL::text, NULL::text, found_hash, NULL::text, unchanged::int,
    NULL::int, NULL::int;
  IF unchanged THEN
    RETURN;
  END IF;
  RETURN QUERY WITH target AS (
  SELECT ${TARGET_COLUMNS}, 1::bigint AS ordering
  FROM veridex_checkpoint_threads th
  JOIN veridex_checkpoints c ON c.thread_key = th.thread_key
  WHERE th.thread_key = found_key AND c.checkpoint_ns = $2 AND c.checkpoint_id = found_id
)${READ_TAIL};
END`,
);

/**
 * A page of one thread's namespace, newest first: the shape LangGraph's state history uses.
 * $1 limit, $2 thread_id, $3 checkpoint_ns, $4 exclusive upper bound on checkpoint_id or
 * null, $5 metadata filter (jsonb containment, as the official saver does) or null.
 */
export const LIST_THREAD_CHECKPOINTS = storedFunction(
  'veridex_checkpoint_list_thread',
  ['int', 'text', 'text', 'text', 'jsonb'],
  'rows',
  `WITH target AS (
  SELECT ${TARGET_COLUMNS},
    row_number() OVER (ORDER BY c.checkpoint_id DESC) AS ordering
  FROM veridex_checkpoint_threads th
  JOIN veridex_checkpoints c ON c.thread_key = th.thread_key
  WHERE th.thread_id = $2 AND c.checkpoint_ns = $3
    AND ($4 IS NULL OR c.checkpoint_id < $4)
    AND ($5 IS NULL OR c.metadata @> $5)
  ORDER BY c.checkpoint_id DESC
  LIMIT $1
)${READ_TAIL}`,
);

/** Which filters a general `list` call uses; each combination is its own statement text. */
export interface ListQueryShape {
  threadId: boolean;
  checkpointNs: boolean;
  checkpointId: boolean;
  filter: boolean;
  before: boolean;
  /** Resume after a (checkpoint_id, thread_id, checkpoint_ns) cursor: paging. */
  cursor: boolean;
}

/**
 * A page of any other `list` call: newest first, at most `$1` rows, then the filters of
 * `shape` as $2, $3… in the order threadId, checkpointNs, checkpointId, filter, before,
 * cursor (three parameters).
 */
export function listCheckpointsSql(shape: ListQueryShape): string {
  const where: string[] = [];
  let next = 2;
  if (shape.threadId) where.push(`th.thread_id = $${next++}`);
  if (shape.checkpointNs) where.push(`c.checkpoint_ns = $${next++}`);
  if (shape.checkpointId) where.push(`c.checkpoint_id = $${next++}`);
  if (shape.filter) where.push(`c.metadata @> $${next++}::jsonb`);
  if (shape.before) where.push(`c.checkpoint_id < $${next++}`);
  if (shape.cursor) {
    where.push(
      `(c.checkpoint_id, th.thread_id, c.checkpoint_ns) < ($${next}, $${next + 1}, $${next + 2})`,
    );
  }
  return `
WITH target AS (
  SELECT ${TARGET_COLUMNS},
    row_number() OVER (ORDER BY c.checkpoint_id DESC, th.thread_id DESC, c.checkpoint_ns DESC) AS ordering
  FROM veridex_checkpoint_threads th
  JOIN veridex_checkpoints c ON c.thread_key = th.thread_key
  ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
  ORDER BY c.checkpoint_id DESC, th.thread_id DESC, c.checkpoint_ns DESC
  LIMIT $1
)${READ_TAIL}`;
}

/** Every function `setup()` installs. */
export const STORED_FUNCTIONS: readonly StoredFunction[] = [
  PUT_CHECKPOINT,
  PUT_WRITES,
  GET_CHECKPOINT,
  LIST_THREAD_CHECKPOINTS,
  DELTA_CHANNEL_HISTORY,
];

/**
 * Pending sends of pre-v4 checkpoints' parents: $1 thread_id, $2 checkpoint_ns, $3 parent
 * checkpoint ids. Values come back as in the read tail (blob, or body for stored lists).
 */
export const SELECT_PENDING_SENDS = `
SELECT w.checkpoint_id, w.type, w.blob, m.body, length(w.element_digests) / 32 AS expected, m.actual
FROM veridex_checkpoint_threads th
JOIN veridex_checkpoint_writes w ON w.thread_key = th.thread_key
LEFT JOIN LATERAL (${ASSEMBLE_MANIFEST}
) m ON w.element_digests IS NOT NULL
WHERE th.thread_id = $1 AND w.checkpoint_ns = $2 AND w.checkpoint_id = ANY($3::text[])
  AND w.channel = '__pregel_tasks'
ORDER BY w.task_id, w.idx`;

/** The thread row of $1 thread_id: its key and chain head. */
export const SELECT_THREAD_HEAD = `
SELECT thread_key, checkpoint_count, pruned_count, latest_checkpoint_ns, latest_checkpoint_id,
  latest_hash
FROM veridex_checkpoint_threads WHERE thread_id = $1`;

/** Every checkpoint row of thread key $1, as stored. */
export const SELECT_THREAD_CHECKPOINTS = `
SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata::text AS metadata,
  value_channels, value_refs, new_value_count, parent_hash, hash, repeated_puts
FROM veridex_checkpoints WHERE thread_key = $1`;

/** Every distinct value referenced by thread key $1, resolved (hex reference, type, data). */
export const SELECT_THREAD_VALUES = `
WITH wanted AS (
  SELECT DISTINCT c.thread_key, r.ref
  FROM veridex_checkpoints c, unnest(c.value_refs) AS r(ref)
  WHERE c.thread_key = $1
),${RESOLVE_REFS}
SELECT encode(ref, 'hex') AS ref, type, blob, body, expected, actual FROM stored`;

/** Every pending write of thread key $1 with its reassembled value and stored hash. */
export const SELECT_THREAD_WRITES = `
SELECT w.checkpoint_ns, w.checkpoint_id, w.task_id, w.task_path, w.idx, w.channel, w.type,
  w.blob, m.body, length(w.element_digests) / 32 AS expected, m.actual, w.hash
FROM veridex_checkpoint_writes w
LEFT JOIN LATERAL (${ASSEMBLE_MANIFEST}
) m ON w.element_digests IS NOT NULL
WHERE w.thread_key = $1`;

/** Checkpoints of thread key $1 removed by prune, with their hashes. */
export const SELECT_THREAD_PRUNED = `
SELECT checkpoint_ns, checkpoint_id, hash FROM veridex_checkpoint_pruned WHERE thread_key = $1`;

/**
 * What prune needs to decide, per checkpoint of thread key $1: its parent, whether it has
 * writes, which channels have stored values, and the delta-channel counters in its metadata.
 */
export const SELECT_PRUNE_CANDIDATES = `
SELECT c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.value_channels,
  c.metadata -> 'counters_since_delta_snapshot' AS delta_counters,
  EXISTS (
    SELECT 1 FROM veridex_checkpoint_writes w WHERE w.thread_key = c.thread_key
      AND w.checkpoint_ns = c.checkpoint_ns AND w.checkpoint_id = c.checkpoint_id
  ) AS has_writes
FROM veridex_checkpoints c WHERE c.thread_key = $1`;

/**
 * Removes checkpoints $2/$3 (namespaces, ids) of thread key $1 with their writes, records
 * their hashes as tombstones so the survivors' chain stays verifiable, and counts them.
 */
export const DELETE_PRUNED_CHECKPOINTS = `
WITH doomed AS (
  DELETE FROM veridex_checkpoints c
  USING unnest($2::text[], $3::text[]) AS d(checkpoint_ns, checkpoint_id)
  WHERE c.thread_key = $1 AND c.checkpoint_ns = d.checkpoint_ns AND c.checkpoint_id = d.checkpoint_id
  RETURNING c.checkpoint_ns, c.checkpoint_id, c.hash, c.repeated_puts
),
tombstones AS (
  INSERT INTO veridex_checkpoint_pruned (thread_key, checkpoint_ns, checkpoint_id, hash)
  SELECT $1, checkpoint_ns, checkpoint_id, hash FROM doomed
  ON CONFLICT DO NOTHING
),
writes AS (
  DELETE FROM veridex_checkpoint_writes w USING doomed d
  WHERE w.thread_key = $1 AND w.checkpoint_ns = d.checkpoint_ns AND w.checkpoint_id = d.checkpoint_id
  RETURNING 1
),
counted AS (
  UPDATE veridex_checkpoint_threads
  SET pruned_count = pruned_count + (SELECT count(*) + coalesce(sum(repeated_puts), 0) FROM doomed)
  WHERE thread_key = $1
)
SELECT (SELECT count(*) FROM doomed)::int AS checkpoints, (SELECT count(*) FROM writes)::int AS writes`;

// The references of thread key $1's remaining checkpoints, decoded far enough for collection.
const REMAINING_REFS = `
remaining AS (
  SELECT get_byte(r.ref, 0) AS kind, substring(r.ref FROM 3 + get_byte(r.ref, 1)) AS payload
  FROM veridex_checkpoints c, unnest(c.value_refs) AS r(ref)
  WHERE c.thread_key = $1
)`;

/** Deletes thread key $1's blobs no remaining checkpoint refers to. */
export const COLLECT_BLOBS = `
WITH ${REMAINING_REFS},
deleted AS (
  DELETE FROM veridex_checkpoint_blobs b
  WHERE b.thread_key = $1
    AND NOT EXISTS (SELECT 1 FROM remaining r WHERE r.kind = 3 AND r.payload = b.digest)
  RETURNING 1
)
SELECT count(*)::int AS deleted FROM deleted`;

/** Trims thread key $1's sequences to the longest length a remaining checkpoint uses. */
export const COLLECT_ITEMS = `
WITH ${REMAINING_REFS},
lengths AS (
  SELECT ('x' || encode(substring(payload FROM 1 FOR 8), 'hex'))::bit(64)::bigint AS sequence_id,
    max(('x' || encode(substring(payload FROM 9 FOR 4), 'hex'))::bit(32)::int) AS length
  FROM remaining WHERE kind = 2
  GROUP BY 1
),
deleted AS (
  DELETE FROM veridex_checkpoint_items i
  WHERE i.thread_key = $1 AND i.position >= coalesce(
    (SELECT l.length FROM lengths l WHERE l.sequence_id = i.sequence_id), 0)
  RETURNING 1
)
SELECT count(*)::int AS deleted FROM deleted`;

/** Deletes thread key $1's elements no remaining sequence item or write refers to. */
export const COLLECT_ELEMENTS = `
WITH referenced AS (
  SELECT element_digest AS digest FROM veridex_checkpoint_items WHERE thread_key = $1
  UNION
  SELECT substring(w.element_digests FROM g.position * 32 + 1 FOR 32)
  FROM veridex_checkpoint_writes w,
    unnest(ARRAY(SELECT generate_series(0, length(w.element_digests) / 32 - 1))) AS g(position)
  WHERE w.thread_key = $1 AND w.element_digests IS NOT NULL
),
deleted AS (
  DELETE FROM veridex_checkpoint_elements e
  WHERE e.thread_key = $1 AND NOT EXISTS (SELECT 1 FROM referenced r WHERE r.digest = e.digest)
  RETURNING 1
)
SELECT count(*)::int AS deleted FROM deleted`;
