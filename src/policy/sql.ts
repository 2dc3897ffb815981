/** All SQL of the policy module. Tables are created by migration 0004_approvals.sql. */

/** Serialises consumers of one scope for the rest of the transaction. */
export const LOCK_SCOPE = 'SELECT pg_advisory_xact_lock(hashtext($1))';

/** Usage of a scope since $2, not counting the proposal $3 itself (it may be a re-run). */
export const USAGE_SINCE = `
SELECT coalesce(sum(cost) FILTER (WHERE proposal_hash <> $3), 0)::float8 AS used
FROM veridex_policy_usage
WHERE scope = $1 AND used_at >= $2`;

export const RECORD_USAGE = `
INSERT INTO veridex_policy_usage (scope, proposal_hash, cost, used_at)
VALUES ($1, $2, $3, $4)
ON CONFLICT (scope, proposal_hash) DO NOTHING`;
