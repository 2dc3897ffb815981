/** All SQL of the approvals module. Tables: migrations 0004_approvals.sql and 0009_approver_identity.sql. */

/** The columns every approvals query selects, in the order `approvalFromRow` reads. */
export const COLUMNS = `id, thread_id, run_id, subject_id, proposal_hash, proposal, summary, route, rule_id, rule_name,
  reason, tiers, tier_index, proposer, status, created_at, expires_at, decided_at, decisions,
  proposers, identity_mode`;

export const INSERT_IF_ABSENT = `
WITH inserted AS (
  INSERT INTO veridex_approvals (${COLUMNS})
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
  ON CONFLICT (id) DO NOTHING
  RETURNING ${COLUMNS}
)
SELECT ${COLUMNS} FROM inserted
UNION ALL
SELECT ${COLUMNS} FROM veridex_approvals WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM inserted)`;

export const SELECT_BY_ID = `SELECT ${COLUMNS} FROM veridex_approvals WHERE id = $1`;

// The database's clock comes back with the locked row: deadlines and decision times are judged
// by it, not by the clock of whichever process decides (see ApprovalStore).
export const SELECT_FOR_UPDATE = `
SELECT ${COLUMNS}, clock_timestamp() AS store_now FROM veridex_approvals WHERE id = $1 FOR UPDATE`;

export const SELECT_CLOCK = `SELECT clock_timestamp() AS store_now`;

export const UPDATE_STATE = `
UPDATE veridex_approvals
SET status = $2, tier_index = $3, expires_at = $4, decided_at = $5, decisions = $6
WHERE id = $1`;

export const LIST_PENDING = `
SELECT ${COLUMNS} FROM veridex_approvals
WHERE status = 'pending' AND ($1::text IS NULL OR thread_id = $1)
ORDER BY created_at, id`;

export const LIST_BY_THREAD = `
SELECT ${COLUMNS} FROM veridex_approvals WHERE thread_id = $1 ORDER BY created_at, id`;

// The run that applied the resolving decision continues itself (migration 0018's columns).
export const MARK_RESUMED_IN_GRAPH = `
UPDATE veridex_approvals SET resumed_at = now(), resume_outcome = 'in_graph'
WHERE id = $1 AND resumed_at IS NULL`;
