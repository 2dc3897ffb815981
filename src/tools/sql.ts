/** All SQL of the tools module. Tables: migrations 0003_tools.sql and 0015_idempotency_fingerprint.sql. */

const RECORD_COLUMNS = `key, state, owner, tool_name, fingerprint, result, error,
  (extract(epoch from lease_expires_at) * 1000)::float8 AS lease_ms,
  (extract(epoch from created_at) * 1000)::float8 AS created_ms,
  (extract(epoch from updated_at) * 1000)::float8 AS updated_ms`;

/** Claims a fresh key; returns no row when the key exists. $1 key, $2 owner, $3 tool, $4 lease ms, $5 fingerprint. */
export const INSERT_RESERVATION = `
INSERT INTO veridex_idempotency_keys (key, state, owner, tool_name, lease_expires_at, created_at, updated_at, fingerprint)
VALUES ($1, 'reserved', $2, $3, clock_timestamp() + $4 * interval '1 millisecond', clock_timestamp(), clock_timestamp(), $5)
ON CONFLICT (key) DO NOTHING
RETURNING ${RECORD_COLUMNS}`;

/** Locks an existing key and says whether its lease has run out. */
export const LOCK_KEY = `
SELECT ${RECORD_COLUMNS}, lease_expires_at <= clock_timestamp() AS expired
FROM veridex_idempotency_keys WHERE key = $1 FOR UPDATE`;

/** Takes over an expired `reserved` key (nothing external happened yet). $1 key, $2 owner, $3 tool, $4 lease ms, $5 fingerprint. */
export const TAKE_OVER = `
UPDATE veridex_idempotency_keys
SET owner = $2, tool_name = $3, fingerprint = $5, lease_expires_at = clock_timestamp() + $4 * interval '1 millisecond', updated_at = clock_timestamp()
WHERE key = $1 RETURNING ${RECORD_COLUMNS}`;

/** An `executing` key whose lease ran out: nobody knows whether the effect happened. */
export const MARK_EXPIRED_IN_DOUBT = `
UPDATE veridex_idempotency_keys SET state = 'in_doubt', updated_at = clock_timestamp()
WHERE key = $1 RETURNING ${RECORD_COLUMNS}`;

/**
 * Moves a key held by $2 from one of the states $3 to state $4, optionally setting result $5,
 * error $6 and a new lease of $7 ms. Returns no row when $2 does not hold the key in those states.
 */
export const TRANSITION = `
UPDATE veridex_idempotency_keys
SET state = $4,
    result = coalesce($5, result),
    error = coalesce($6, error),
    lease_expires_at = CASE WHEN $7::float8 IS NULL THEN lease_expires_at
                            ELSE clock_timestamp() + $7::float8 * interval '1 millisecond' END,
    updated_at = clock_timestamp()
WHERE key = $1 AND owner = $2 AND state = ANY($3::text[])
RETURNING key`;

/** Deletes a key held by $2 in one of the states $3. */
export const RELEASE = `DELETE FROM veridex_idempotency_keys WHERE key = $1 AND owner = $2 AND state = ANY($3::text[]) RETURNING key`;

export const GET_KEY = `SELECT ${RECORD_COLUMNS} FROM veridex_idempotency_keys WHERE key = $1`;

/** Settles an in-doubt key: $2 state, $3 result, $4 error. */
export const RESOLVE_IN_DOUBT = `
UPDATE veridex_idempotency_keys SET state = $2, result = $3, error = $4, updated_at = clock_timestamp()
WHERE key = $1 AND state = 'in_doubt' RETURNING ${RECORD_COLUMNS}`;

export const RELEASE_IN_DOUBT = `DELETE FROM veridex_idempotency_keys WHERE key = $1 AND state = 'in_doubt' RETURNING key`;

export const GET_PIN =
  'SELECT name, schema_hash, source, pinned_at FROM veridex_tool_pins WHERE name = $1';

export const LIST_PINS =
  'SELECT name, schema_hash, source, pinned_at FROM veridex_tool_pins ORDER BY name';

export const UPSERT_PIN = `
INSERT INTO veridex_tool_pins (name, schema_hash, source, pinned_at) VALUES ($1, $2, $3, $4)
ON CONFLICT (name) DO UPDATE SET schema_hash = EXCLUDED.schema_hash, source = EXCLUDED.source, pinned_at = EXCLUDED.pinned_at`;

export const DELETE_PIN = 'DELETE FROM veridex_tool_pins WHERE name = $1';
