-- The approvals inbox (`veridex serve`): sign-in sessions, one-time challenges, consumed
-- decision nonces, enrolment invitations, passkeys in the approver directory, and the
-- webhook delivery log. Secrets (session tokens, invitation tokens) are stored only as
-- SHA-256 hashes: reading these tables does not let anyone sign in.

CREATE TABLE veridex_inbox_sessions (
  token_hash text PRIMARY KEY,
  approver_id text NOT NULL REFERENCES veridex_approvers (id),
  -- The directory key the approver proved they hold when signing in.
  key_id text NOT NULL,
  method text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz
);

CREATE INDEX veridex_inbox_sessions_expiry ON veridex_inbox_sessions (expires_at);

-- Server-issued challenges (sign-in, passkey registration, passkey decisions): each is used
-- at most once (`used_at`), and only before it expires.
CREATE TABLE veridex_inbox_challenges (
  challenge text PRIMARY KEY,
  purpose text NOT NULL,
  approver_id text,
  approval_id text,
  details jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);

CREATE INDEX veridex_inbox_challenges_expiry ON veridex_inbox_challenges (expires_at);

-- Every decision statement nonce the service accepted, per approval: the same statement
-- posted again is refused at the door, even before the approvals table is consulted.
CREATE TABLE veridex_inbox_nonces (
  approval_id text NOT NULL,
  nonce text NOT NULL,
  used_at timestamptz NOT NULL,
  PRIMARY KEY (approval_id, nonce)
);

-- One-time enrolment links an admin hands to an approver (`veridex approvers invite`).
CREATE TABLE veridex_inbox_invitations (
  token_hash text PRIMARY KEY,
  approver_id text NOT NULL REFERENCES veridex_approvers (id),
  created_by text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz
);

-- Passkeys are approver keys of type 'webauthn': the credential (id, relying party,
-- transports) and the authenticator's signature counter live beside the COSE public key.
ALTER TABLE veridex_approver_keys ADD COLUMN credential jsonb;
ALTER TABLE veridex_approver_keys ADD COLUMN sign_count bigint NOT NULL DEFAULT 0;

-- Webhook deliveries: one row per (endpoint, message), so several service instances never
-- deliver the same event twice; retried with backoff until delivered or given up.
CREATE TABLE veridex_webhook_deliveries (
  endpoint text NOT NULL,
  message_id text NOT NULL,
  event_type text NOT NULL,
  payload jsonb NOT NULL,
  status text NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  last_status integer,
  last_error text,
  created_at timestamptz NOT NULL,
  delivered_at timestamptz,
  PRIMARY KEY (endpoint, message_id)
);

CREATE INDEX veridex_webhook_deliveries_due ON veridex_webhook_deliveries (next_attempt_at)
  WHERE status = 'pending';
