/** All SQL of the approvals service. Tables: migration 0013_inbox.sql (and 0004/0009 for approvals). */

export const INSERT_SESSION = `
INSERT INTO veridex_inbox_sessions (token_hash, approver_id, key_id, method, created_at, expires_at, seal)
VALUES ($1, $2, $3, $4, $5, $6, $7)`;

export const SELECT_SESSION = `
SELECT approver_id, key_id, method, created_at, expires_at, seal FROM veridex_inbox_sessions
WHERE token_hash = $1 AND revoked_at IS NULL AND expires_at > $2`;

export const REVOKE_SESSION = `
UPDATE veridex_inbox_sessions SET revoked_at = $2 WHERE token_hash = $1 AND revoked_at IS NULL`;

export const DELETE_EXPIRED_SESSIONS = `DELETE FROM veridex_inbox_sessions WHERE expires_at < $1`;

export const INSERT_CHALLENGE = `
INSERT INTO veridex_inbox_challenges (challenge, purpose, approver_id, approval_id, details, created_at, expires_at)
VALUES ($1, $2, $3, $4, $5, $6, $7)`;

// One statement marks the challenge used and returns it, so two requests racing with the same
// challenge cannot both get it.
export const CONSUME_CHALLENGE = `
UPDATE veridex_inbox_challenges SET used_at = $3
WHERE challenge = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > $3
RETURNING approver_id, approval_id, details`;

export const DELETE_EXPIRED_CHALLENGES = `DELETE FROM veridex_inbox_challenges WHERE expires_at < $1`;

export const RESERVE_NONCE = `
INSERT INTO veridex_inbox_nonces (approval_id, nonce, used_at) VALUES ($1, $2, $3)
ON CONFLICT DO NOTHING`;

export const INSERT_INVITATION = `
INSERT INTO veridex_inbox_invitations (token_hash, approver_id, created_by, created_at, expires_at, seal)
VALUES ($1, $2, $3, $4, $5, $6)`;

export const SELECT_INVITATION = `
SELECT approver_id, created_by, created_at, expires_at, seal FROM veridex_inbox_invitations
WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2`;

export const CONSUME_INVITATION = `
UPDATE veridex_inbox_invitations SET used_at = $2
WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2
RETURNING approver_id, created_by, created_at, expires_at, seal`;

/** Newest first, keyset-paginated on (created_at, id). */
export function listApprovalsSql(columns: string): string {
  return `
SELECT ${columns} FROM veridex_approvals
WHERE ($1::text IS NULL OR status = $1)
  AND ($2::text IS NULL OR thread_id = $2)
  AND ($3::timestamptz IS NULL OR (created_at, id) < ($3::timestamptz, $4::text))
ORDER BY created_at DESC, id DESC
LIMIT $5`;
}

/** What the live feed compares between polls: pending requests and recently settled ones. */
export const FEED_SNAPSHOT = `
SELECT id, thread_id, status, tier_index, tiers, decisions, created_at, expires_at, decided_at
FROM veridex_approvals
WHERE status = 'pending' OR decided_at >= $1 OR created_at >= $1`;

export const SELECT_SIGN_COUNT = `SELECT sign_count FROM veridex_approver_keys WHERE key_id = $1`;

// Only forward: a counter that went backwards (a cloned authenticator) is refused before this.
export const UPDATE_SIGN_COUNT = `
UPDATE veridex_approver_keys SET sign_count = $2 WHERE key_id = $1 AND sign_count < $2`;

export const ENQUEUE_DELIVERY = `
INSERT INTO veridex_webhook_deliveries
  (endpoint, message_id, event_type, payload, status, attempts, next_attempt_at, created_at)
VALUES ($1, $2, $3, $4, 'pending', 0, $5, $5)
ON CONFLICT (endpoint, message_id) DO NOTHING`;

// Claims due deliveries for one attempt: bumps the attempt count and leases them (pushes
// next_attempt_at past the send timeout), so another instance polling meanwhile skips them.
export const CLAIM_DELIVERIES = `
UPDATE veridex_webhook_deliveries d
SET attempts = d.attempts + 1, next_attempt_at = $2
FROM (
  SELECT endpoint, message_id FROM veridex_webhook_deliveries
  WHERE status = 'pending' AND next_attempt_at <= $1
  ORDER BY next_attempt_at
  LIMIT $3
  FOR UPDATE SKIP LOCKED
) due
WHERE d.endpoint = due.endpoint AND d.message_id = due.message_id
RETURNING d.endpoint, d.message_id, d.event_type, d.payload, d.attempts, d.created_at`;

export const MARK_DELIVERED = `
UPDATE veridex_webhook_deliveries
SET status = 'delivered', delivered_at = $3, last_status = $4, last_error = NULL
WHERE endpoint = $1 AND message_id = $2`;

export const MARK_FAILED_ATTEMPT = `
UPDATE veridex_webhook_deliveries
SET status = $3, next_attempt_at = $4, last_status = $5, last_error = $6
WHERE endpoint = $1 AND message_id = $2`;

export const LIST_DELIVERIES = `
SELECT endpoint, message_id, event_type, status, attempts, next_attempt_at, last_status,
  last_error, created_at, delivered_at
FROM veridex_webhook_deliveries
WHERE ($1::text IS NULL OR message_id LIKE $1 || '%')
ORDER BY created_at DESC, message_id
LIMIT $2`;

// The resumer's bookkeeping for one request (migration 0018_resumptions.sql).
export const SELECT_RESUMPTION = `
SELECT resumed_at, resume_outcome, resume_error, resume_attempts FROM veridex_approvals WHERE id = $1`;
