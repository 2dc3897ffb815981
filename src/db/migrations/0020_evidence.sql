-- Sealed evidence bundles, one per (thread, run), so the approvals service can hand an auditor
-- the latest one over HTTP (README "Audit log and evidence bundles"). A stored bundle is a copy,
-- not an authority: `veridex verify` checks its signatures against keys the auditor trusts.
CREATE TABLE veridex_evidence (
  thread_id text NOT NULL,
  run_id text NOT NULL,
  bundle jsonb NOT NULL,
  bundle_hash text NOT NULL,
  sealed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (thread_id, run_id)
);

CREATE INDEX veridex_evidence_latest ON veridex_evidence (thread_id, sealed_at DESC);
