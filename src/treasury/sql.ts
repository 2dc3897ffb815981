/** All SQL of the treasury module. Tables are created by migration 0007_treasury.sql. */

const COLUMNS = `idempotency_key, app_id, agent_id, currency, decimals, amount::text AS amount,
  counterparty, memo, thread_id, run_id, tool_call_id, proposal_hash, state, attempt, receipt,
  (extract(epoch from reserved_at) * 1000)::float8 AS reserved_ms,
  (extract(epoch from updated_at) * 1000)::float8 AS updated_ms`;

/** Creates or locks the ceiling row of $1 app, $2 agent, $3 currency (an upsert takes the row lock). */
export const LOCK_CEILING = `
INSERT INTO veridex_treasury_ceilings (app_id, agent_id, currency) VALUES ($1, $2, $3)
ON CONFLICT (app_id, agent_id, currency) DO UPDATE SET last_reserved_at = now()
RETURNING app_id`;

/**
 * Under the lock: the window total of $2 app, $3 agent, $4 currency since $5, other keys than
 * $1, and the row of key $1 if any. A statement of its own, so its snapshot sees every
 * reservation committed before the lock was granted.
 */
export const READ_FOR_RESERVE = `
SELECT (SELECT coalesce(sum(amount), 0)::text FROM veridex_treasury_transfers
        WHERE app_id = $2 AND agent_id = $3 AND currency = $4 AND state <> 'released'
          AND reserved_at > $5 AND idempotency_key <> $1) AS spent,
       (SELECT row_to_json(existing) FROM (SELECT ${COLUMNS} FROM veridex_treasury_transfers
          WHERE idempotency_key = $1) AS existing) AS existing`;

/** Inserts a reservation, or re-reserves a released key (attempt + 1). */
export const UPSERT_RESERVATION = `
INSERT INTO veridex_treasury_transfers (idempotency_key, app_id, agent_id, currency, decimals,
  amount, counterparty, memo, thread_id, run_id, tool_call_id, proposal_hash, state, attempt,
  reserved_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6::numeric, $7, $8, $9, $10, $11, $12, 'reserved', 1, $13, $13)
ON CONFLICT (idempotency_key) DO UPDATE
  SET state = 'reserved', attempt = veridex_treasury_transfers.attempt + 1,
      reserved_at = EXCLUDED.reserved_at, updated_at = EXCLUDED.updated_at
  WHERE veridex_treasury_transfers.state = 'released'
RETURNING ${COLUMNS}`;

/** Moves key $1 from one of the states $2 to $3 at $4, storing receipt $5 if given. */
export const MOVE = `
UPDATE veridex_treasury_transfers
SET state = $3, updated_at = $4, receipt = coalesce($5::jsonb, receipt)
WHERE idempotency_key = $1 AND state = ANY($2::text[])
RETURNING ${COLUMNS}`;

export const GET_TRANSFER = `SELECT ${COLUMNS} FROM veridex_treasury_transfers WHERE idempotency_key = $1`;

/** Committed and pending spend of $1 app, $2 agent, $3 currency reserved after $4. */
export const USAGE = `
SELECT coalesce(sum(amount) FILTER (WHERE state = 'committed'), 0)::text AS committed,
       coalesce(sum(amount) FILTER (WHERE state IN ('reserved', 'executing')), 0)::text AS pending
FROM veridex_treasury_transfers
WHERE app_id = $1 AND agent_id = $2 AND currency = $3 AND state <> 'released' AND reserved_at > $4`;

/** The test payment rail's append-only table (created by `DatabasePaymentRail.install()`, not by a migration). */
export const CREATE_TEST_RAIL = `
CREATE TABLE IF NOT EXISTS veridex_test_payment_rail (
  id bigserial PRIMARY KEY,
  idempotency_key text NOT NULL,
  to_address text NOT NULL,
  amount numeric(78, 0) NOT NULL,
  currency text NOT NULL,
  decimals integer NOT NULL,
  reference text NOT NULL,
  network text NOT NULL,
  executed_at timestamptz NOT NULL
)`;

/** Records one execution (never deduplicated: the double counts every call). */
export const INSERT_RAIL_EXECUTION = `
INSERT INTO veridex_test_payment_rail (idempotency_key, to_address, amount, currency, decimals, reference, network, executed_at)
VALUES ($1, $2, $3::numeric, $4, $5, $6, $7, $8)
RETURNING id`;

const RAIL_COLUMNS = `id::text AS id, idempotency_key, to_address, amount::text AS amount, currency, decimals,
  reference, network, (extract(epoch from executed_at) * 1000)::float8 AS executed_ms`;

export const LIST_RAIL_EXECUTIONS = `SELECT ${RAIL_COLUMNS} FROM veridex_test_payment_rail ORDER BY id`;

export const RAIL_EXECUTIONS_OF_KEY = `SELECT ${RAIL_COLUMNS} FROM veridex_test_payment_rail WHERE idempotency_key = $1 ORDER BY id`;
