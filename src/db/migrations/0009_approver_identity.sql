-- Approver identity: a directory of approvers with their public keys, and what each approval
-- request needs to enforce signed decisions (the identity mode it was opened in, and every
-- identity that proposed it — the agent, its operators, and whoever edited the arguments).
CREATE TABLE veridex_approvers (
  id text PRIMARY KEY,
  -- Confusable skeleton of the canonical id: two approvers may not look alike.
  identity_key text NOT NULL UNIQUE,
  display_name text NOT NULL,
  roles jsonb NOT NULL,
  added_at timestamptz NOT NULL,
  revoked_at timestamptz
);

CREATE TABLE veridex_approver_keys (
  key_id text PRIMARY KEY,
  approver_id text NOT NULL REFERENCES veridex_approvers (id),
  type text NOT NULL,
  public_key text NOT NULL,
  added_at timestamptz NOT NULL,
  revoked_at timestamptz
);

CREATE INDEX veridex_approver_keys_approver ON veridex_approver_keys (approver_id);

ALTER TABLE veridex_approvals ADD COLUMN proposers jsonb NOT NULL DEFAULT '[]'::jsonb;
ALTER TABLE veridex_approvals ADD COLUMN identity_mode text NOT NULL DEFAULT 'signed';
