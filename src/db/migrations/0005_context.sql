-- Summaries of older conversation turns, cached per thread so that the same span is not
-- summarised again on every turn. An entry is identified by the hash of the span it covers;
-- only a few recent entries per thread are kept (older ones are deleted on insert).
CREATE TABLE veridex_context_summaries (
  thread_id text NOT NULL,
  span_hash text NOT NULL,
  seq bigint GENERATED ALWAYS AS IDENTITY,
  covered_units integer NOT NULL,
  summarizer text NOT NULL,
  summary text NOT NULL,
  summary_tokens integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (thread_id, span_hash)
);

CREATE INDEX veridex_context_summaries_recent ON veridex_context_summaries (thread_id, seq DESC);

-- Signed hand-off envelopes, one ledger per ledger id (usually the thread). Envelopes are
-- never edited: versions only grow, a rollback only sets rolled_back_at on the abandoned
-- head, and pruning deletes whole rows. The envelope is stored as its canonical JSON text so
-- the stored bytes are the bytes that were signed.
CREATE TABLE veridex_context_ledger (
  ledger_id text NOT NULL,
  version bigint NOT NULL,
  key_id text NOT NULL,
  signature text NOT NULL,
  parents bigint[] NOT NULL DEFAULT '{}',
  envelope text NOT NULL,
  committed_at timestamptz NOT NULL DEFAULT now(),
  rolled_back_at timestamptz,
  rollback_reason text,
  PRIMARY KEY (ledger_id, version)
);
