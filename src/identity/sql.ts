/** All SQL of the identity module. Tables: migrations 0009_approver_identity.sql, 0013_inbox.sql (passkey columns), 0016_directory_seals.sql and 0017_key_sponsor.sql. */

const APPROVER_WITH_KEYS = `
SELECT a.id, a.identity_key, a.display_name, a.roles, a.added_at, a.revoked_at, a.seal,
  COALESCE(
    json_agg(json_build_object(
      'type', k.type, 'keyId', k.key_id, 'publicKey', k.public_key,
      'addedAt', k.added_at, 'revokedAt', k.revoked_at, 'credential', k.credential,
      'seal', k.seal, 'sponsor', k.sponsor
    ) ORDER BY k.added_at, k.key_id) FILTER (WHERE k.key_id IS NOT NULL),
    '[]'::json
  ) AS keys
FROM veridex_approvers a
LEFT JOIN veridex_approver_keys k ON k.approver_id = a.id`;

// By the indexed column or by the canonical id: the column is not sealed, so the caller keeps
// only the row whose sealed id has that identity key.
export const SELECT_BY_IDENTITY_KEY = `${APPROVER_WITH_KEYS}
WHERE a.identity_key = $1 OR a.id = $2
GROUP BY a.id`;

export const SELECT_BY_KEY_ID = `${APPROVER_WITH_KEYS}
WHERE a.id = (SELECT approver_id FROM veridex_approver_keys WHERE key_id = $1)
GROUP BY a.id`;

export const SELECT_ALL = `${APPROVER_WITH_KEYS}
GROUP BY a.id
ORDER BY a.id`;

export const INSERT_APPROVER = `
INSERT INTO veridex_approvers (id, identity_key, display_name, roles, added_at, seal)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT DO NOTHING`;

// Every approver entry without its keys: what adding a name is checked against (its sealed id,
// never the unsealed identity_key column).
export const SELECT_APPROVER_ENTRIES = `
SELECT id, identity_key, display_name, roles, added_at, revoked_at, seal, '[]'::json AS keys
FROM veridex_approvers`;

export const SELECT_ID_BY_IDENTITY_KEY = `SELECT id FROM veridex_approvers WHERE identity_key = $1 OR id = $2`;

export const INSERT_KEY = `
INSERT INTO veridex_approver_keys (key_id, approver_id, type, public_key, added_at, credential, seal, sponsor)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (key_id) DO NOTHING`;

export const SELECT_KEY_OWNER = `SELECT approver_id FROM veridex_approver_keys WHERE key_id = $1`;

// Revoking rewrites the seal with the revocation time; a row already revoked keeps both.
export const REVOKE_APPROVER = `
UPDATE veridex_approvers SET revoked_at = $2, seal = $3 WHERE id = $1 AND revoked_at IS NULL`;

export const REVOKE_KEY = `
UPDATE veridex_approver_keys SET revoked_at = $3, seal = $4
WHERE approver_id = $1 AND key_id = $2 AND revoked_at IS NULL`;

// An operator vouching for rows as they stand (`veridex approvers seal`).
export const SEAL_APPROVER = `UPDATE veridex_approvers SET seal = $2 WHERE id = $1`;

export const SEAL_KEY = `UPDATE veridex_approver_keys SET seal = $3 WHERE approver_id = $1 AND key_id = $2`;
