-- Signed tree heads (RFC 9162 style) over each thread's audit events, and the global log of
-- them. Thread heads are the leaves of the global tree in the order they were recorded
-- (global_index, assigned under an advisory lock so the order never has gaps); a global head
-- signs the root of the first tree_size of them. `head` is the signed head as canonical JSON,
-- exactly as it was published, so it can be re-published and re-verified byte for byte.
CREATE TABLE veridex_audit_tree_heads (
  global_index bigint PRIMARY KEY,
  thread_id text NOT NULL,
  tree_size bigint NOT NULL,
  root_hash text NOT NULL,
  head text NOT NULL,
  UNIQUE (thread_id, tree_size)
);

CREATE TABLE veridex_audit_global_heads (
  tree_size bigint PRIMARY KEY,
  root_hash text NOT NULL,
  head text NOT NULL
);
