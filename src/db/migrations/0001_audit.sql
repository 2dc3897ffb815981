-- Hash-chained audit events, one chain per thread. The payload is stored as its canonical
-- JSON text (not jsonb) so that the stored bytes are exactly the bytes that were hashed.
CREATE TABLE veridex_audit_events (
  thread_id text NOT NULL,
  seq bigint NOT NULL,
  event_id text NOT NULL,
  run_id text NOT NULL,
  turn_index integer NOT NULL,
  type text NOT NULL,
  timestamp text NOT NULL,
  payload text NOT NULL,
  previous_hash text NOT NULL,
  hash text NOT NULL,
  PRIMARY KEY (thread_id, seq),
  UNIQUE (thread_id, event_id)
);

CREATE INDEX veridex_audit_events_type ON veridex_audit_events (type, thread_id);

-- The current end of each chain. Appends lock this row, so concurrent appends to one
-- thread are serialised and the chain never forks.
CREATE TABLE veridex_audit_heads (
  thread_id text PRIMARY KEY,
  seq bigint NOT NULL,
  hash text NOT NULL
);
