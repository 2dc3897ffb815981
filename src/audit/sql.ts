/** All SQL of the audit module. Tables are created by migration 0001_audit.sql. */

/** Locks (creating if needed) the thread's head row and returns it with any already-stored events among $2. */
export const LOCK_HEAD_AND_FIND_EXISTING = `
WITH head AS (
  INSERT INTO veridex_audit_heads (thread_id, seq, hash) VALUES ($1, 0, $3)
  ON CONFLICT (thread_id) DO UPDATE SET thread_id = EXCLUDED.thread_id
  RETURNING seq, hash
)
SELECT head.seq::text AS seq, head.hash,
  (SELECT coalesce(json_agg(json_build_object(
     'eventId', e.event_id, 'runId', e.run_id, 'turnIndex', e.turn_index, 'type', e.type,
     'timestamp', e.timestamp, 'payload', e.payload, 'previousEventHash', e.previous_hash, 'hash', e.hash)), '[]')
   FROM veridex_audit_events e WHERE e.thread_id = $1 AND e.event_id = ANY($2::text[])) AS existing
FROM head`;

/** Inserts linked events (parallel arrays) and moves the head, in one statement. */
export const INSERT_EVENTS_AND_MOVE_HEAD = `
WITH inserted AS (
  INSERT INTO veridex_audit_events
    (thread_id, seq, event_id, run_id, turn_index, type, timestamp, payload, previous_hash, hash)
  SELECT $1, seq, event_id, run_id, turn_index, type, ts, payload, previous_hash, hash
  FROM unnest($2::bigint[], $3::text[], $4::text[], $5::int[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[])
    AS t(seq, event_id, run_id, turn_index, type, ts, payload, previous_hash, hash)
  RETURNING 1
)
-- A data-modifying CTE always runs to completion, whether or not it is referenced.
UPDATE veridex_audit_heads SET seq = $11, hash = $12 WHERE thread_id = $1`;

export const LIST_EVENTS = `
SELECT event_id, run_id, turn_index, type, timestamp, payload, previous_hash, hash
FROM veridex_audit_events WHERE thread_id = $1 ORDER BY seq`;

// Secret fingerprints (migration 0011_secret_fingerprints.sql).

/** Creates the database's fingerprint keys once ($1 hex HMAC key, $2 odd 32-bit base) and returns them. */
export const ENSURE_FINGERPRINT_KEYS = `
WITH created AS (
  INSERT INTO veridex_secret_fingerprint_keys (id, hmac_key, rolling_base) VALUES (1, $1, $2)
  ON CONFLICT (id) DO NOTHING
  RETURNING hmac_key, rolling_base
)
SELECT hmac_key, rolling_base::text AS rolling_base FROM created
UNION ALL
SELECT hmac_key, rolling_base::text FROM veridex_secret_fingerprint_keys WHERE id = 1
LIMIT 1`;

/** Serialises fingerprint inserts (see the migration) for the rest of the transaction. */
export const LOCK_FINGERPRINT_INSERTS = `SELECT pg_advisory_xact_lock(hashtext($1))`;

/** Inserts fingerprints (parallel arrays); one already stored (same HMAC) is left alone. */
export const INSERT_FINGERPRINTS = `
INSERT INTO veridex_secret_fingerprints (name, form, length, tag, hmac)
SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::int[], $5::text[])
ON CONFLICT (hmac) DO NOTHING`;

/** Fingerprints stored after seq $1, in order. */
export const LIST_FINGERPRINTS_SINCE = `
SELECT seq::text AS seq, name, form, length, tag, hmac
FROM veridex_secret_fingerprints WHERE seq > $1::bigint ORDER BY seq`;

// Signed tree heads (migration 0010_audit_tree_heads.sql).

/** Serialises head recording for the rest of the transaction, so global indexes have no gaps. */
export const LOCK_TREE_HEADS = `SELECT pg_advisory_xact_lock(hashtext('veridex.audit_tree_heads'))`;

/** Appends a thread head as the next leaf of the global tree; nothing when its size is recorded. */
export const INSERT_THREAD_HEAD = `
INSERT INTO veridex_audit_tree_heads (global_index, thread_id, tree_size, root_hash, head)
SELECT coalesce(max(global_index) + 1, 0), $1, $2, $3, $4 FROM veridex_audit_tree_heads
ON CONFLICT (thread_id, tree_size) DO NOTHING
RETURNING global_index`;

export const FIND_THREAD_HEAD = `
SELECT head FROM veridex_audit_tree_heads WHERE thread_id = $1 AND tree_size = $2`;

export const LIST_THREAD_HEADS = `
SELECT head FROM veridex_audit_tree_heads WHERE thread_id = $1 ORDER BY tree_size`;

export const LIST_GLOBAL_LEAVES = `SELECT head FROM veridex_audit_tree_heads ORDER BY global_index`;

export const INSERT_GLOBAL_HEAD = `
INSERT INTO veridex_audit_global_heads (tree_size, root_hash, head) VALUES ($1, $2, $3)
ON CONFLICT (tree_size) DO NOTHING
RETURNING tree_size`;

export const FIND_GLOBAL_HEAD = `SELECT head FROM veridex_audit_global_heads WHERE tree_size = $1`;

export const LIST_GLOBAL_HEADS = `SELECT head FROM veridex_audit_global_heads ORDER BY tree_size`;

/** Every thread with events and its length (the chain heads kept by appends). */
export const LIST_THREADS = `SELECT thread_id, seq::text AS seq FROM veridex_audit_heads ORDER BY thread_id`;
