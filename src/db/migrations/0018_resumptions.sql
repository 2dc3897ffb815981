-- What the resumer (README "Resuming runs when approvals resolve") did with each resolved
-- request: when it continued the run, its lease while it works on it, how often it tried and
-- the last error. Bookkeeping only: the gate before a call re-proves the approval either way.
ALTER TABLE veridex_approvals ADD COLUMN resumed_at timestamptz;
ALTER TABLE veridex_approvals ADD COLUMN resume_outcome text;
ALTER TABLE veridex_approvals ADD COLUMN resume_lease_until timestamptz;
ALTER TABLE veridex_approvals ADD COLUMN resume_attempts integer NOT NULL DEFAULT 0;
ALTER TABLE veridex_approvals ADD COLUMN resume_error text;

CREATE INDEX veridex_approvals_unresumed ON veridex_approvals (decided_at)
  WHERE status <> 'pending' AND resumed_at IS NULL;
