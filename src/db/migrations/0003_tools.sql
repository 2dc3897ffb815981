-- Governed tools: idempotency keys (at-most-once execution across processes and crashes)
-- and schema pins of imported tools (so a tool changed between restarts is caught).
CREATE TABLE veridex_idempotency_keys (
  key text PRIMARY KEY,
  state text NOT NULL CHECK (state IN ('reserved', 'executing', 'completed', 'failed', 'in_doubt')),
  owner text NOT NULL,
  tool_name text NOT NULL,
  lease_expires_at timestamptz NOT NULL,
  -- JSON text (bigint values tagged), present when completed.
  result text,
  -- JSON text { code, message }, present when failed.
  error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Operators list what needs resolving.
CREATE INDEX veridex_idempotency_keys_in_doubt ON veridex_idempotency_keys (updated_at)
  WHERE state = 'in_doubt';

CREATE TABLE veridex_tool_pins (
  name text PRIMARY KEY,
  schema_hash text NOT NULL,
  source text,
  pinned_at text NOT NULL
);
