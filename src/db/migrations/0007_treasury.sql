-- Treasury kit. One row per transfer, keyed by its idempotency key: the reservation against
-- the spending ceilings, its state (reserved → executing → committed, or released) and the
-- executor's receipt. A transfer found `executing` after a crash may have moved money; one
-- found `reserved` certainly did not. Amounts are exact minor units (numeric, never float).
CREATE TABLE veridex_treasury_transfers (
  idempotency_key text PRIMARY KEY,
  app_id text NOT NULL,
  agent_id text NOT NULL,
  currency text NOT NULL,
  decimals integer NOT NULL CHECK (decimals BETWEEN 0 AND 36),
  amount numeric(78, 0) NOT NULL CHECK (amount > 0),
  counterparty text NOT NULL,
  memo text,
  thread_id text NOT NULL,
  run_id text NOT NULL,
  tool_call_id text NOT NULL,
  proposal_hash text NOT NULL,
  state text NOT NULL CHECK (state IN ('reserved', 'executing', 'committed', 'released')),
  attempt integer NOT NULL,
  receipt jsonb,
  reserved_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

-- The rolling-window sum reads only live spend of one app, agent and currency.
CREATE INDEX veridex_treasury_transfers_window
  ON veridex_treasury_transfers (app_id, agent_id, currency, reserved_at)
  WHERE state <> 'released';

-- One lock row per app, agent and currency: a reservation locks it (upsert) before summing
-- the window, so concurrent reservations from any number of connections are serialised and
-- can never overshoot a limit together.
CREATE TABLE veridex_treasury_ceilings (
  app_id text NOT NULL,
  agent_id text NOT NULL,
  currency text NOT NULL,
  last_reserved_at timestamptz,
  PRIMARY KEY (app_id, agent_id, currency)
);
