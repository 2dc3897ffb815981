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
