-- Human approval requests. Decisions are applied under a row lock (SELECT ... FOR UPDATE),
-- so two processes deciding the same request at once produce one consistent outcome.
CREATE TABLE veridex_approvals (
  id text PRIMARY KEY,
  thread_id text NOT NULL,
  run_id text NOT NULL,
  subject_id text NOT NULL,
  proposal_hash text NOT NULL,
  proposal jsonb NOT NULL,
  summary jsonb NOT NULL,
  route text NOT NULL,
  rule_id text NOT NULL,
  rule_name text NOT NULL,
  reason text NOT NULL,
  tiers jsonb NOT NULL,
  tier_index integer NOT NULL,
  proposer text NOT NULL,
  status text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  decided_at timestamptz,
  decisions jsonb NOT NULL
);

CREATE INDEX veridex_approvals_pending ON veridex_approvals (expires_at) WHERE status = 'pending';
CREATE INDEX veridex_approvals_thread ON veridex_approvals (thread_id, created_at);

-- Usage recorded by budget ("fuel") and rate-limit rules: one row per proposal and scope,
-- keyed by the proposal hash, so a re-run node re-evaluating the same proposal is not
-- counted twice. Shared by every process using the database.
CREATE TABLE veridex_policy_usage (
  scope text NOT NULL,
  proposal_hash text NOT NULL,
  cost double precision NOT NULL,
  used_at timestamptz NOT NULL,
  PRIMARY KEY (scope, proposal_hash)
);

CREATE INDEX veridex_policy_usage_window ON veridex_policy_usage (scope, used_at);
