-- PostgresCheckpointer storage (src/checkpointer/). Every table is keyed by a compact
-- thread_key instead of repeating the caller's thread id on every row.

-- One row per thread: interns the thread id and anchors the hash chain (count and latest
-- hash), so that deleting the newest checkpoint is as visible as editing an old one.
CREATE TABLE veridex_checkpoint_threads (
  thread_key bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  thread_id text NOT NULL UNIQUE,
  checkpoint_count bigint NOT NULL DEFAULT 0,
  pruned_count bigint NOT NULL DEFAULT 0,
  latest_checkpoint_ns text,
  latest_checkpoint_id text,
  latest_hash bytea
);

-- One row per checkpoint. `checkpoint` is the checkpoint's JSON without `id` and
-- `channel_values`. Stored channel values are references: `value_refs[i]` is the value of
-- `value_channels[i]`, encoded as kind (1 byte), serde type length (1 byte), serde type,
-- then a payload: kind 1 the serialised value itself (small values), kind 2 a list as
-- sequence id (8 bytes) and length (4 bytes), kind 3 the SHA-256 key of a row in
-- veridex_checkpoint_blobs. The first `new_value_count` entries were written by this
-- checkpoint (and are covered by its hash); the rest are copied from the parent.
-- `hash` = sha256(parent_hash || content digest).
CREATE TABLE veridex_checkpoints (
  thread_key bigint NOT NULL,
  checkpoint_ns text NOT NULL,
  checkpoint_id text NOT NULL,
  parent_checkpoint_id text,
  checkpoint text NOT NULL,
  metadata jsonb NOT NULL,
  value_channels text[] NOT NULL,
  value_refs bytea[] NOT NULL,
  new_value_count integer NOT NULL,
  parent_hash bytea,
  hash bytea NOT NULL,
  PRIMARY KEY (thread_key, checkpoint_ns, checkpoint_id)
);

-- Serialised values too large to inline that are not lists, content-addressed per thread.
CREATE TABLE veridex_checkpoint_blobs (
  thread_key bigint NOT NULL,
  digest bytea NOT NULL,
  blob bytea NOT NULL,
  PRIMARY KEY (thread_key, digest)
);

-- Append-only sequences of list elements: a growing `messages` list costs one row per new
-- message, not a rewrite of the whole list.
CREATE TABLE veridex_checkpoint_items (
  thread_key bigint NOT NULL,
  sequence_id bigint NOT NULL,
  position integer NOT NULL,
  element_digest bytea NOT NULL,
  PRIMARY KEY (thread_key, sequence_id, position)
);

-- List elements (their JSON text), stored once per thread whatever lists or writes use them.
CREATE TABLE veridex_checkpoint_elements (
  thread_key bigint NOT NULL,
  digest bytea NOT NULL,
  body text NOT NULL,
  PRIMARY KEY (thread_key, digest)
);

-- Pending writes. A list value is stored as `element_digests` (concatenated 32-byte
-- digests of its elements) instead of `blob`.
CREATE TABLE veridex_checkpoint_writes (
  thread_key bigint NOT NULL,
  checkpoint_ns text NOT NULL,
  checkpoint_id text NOT NULL,
  task_id text NOT NULL,
  idx integer NOT NULL,
  task_path text NOT NULL,
  channel text NOT NULL,
  type text NOT NULL,
  blob bytea,
  element_digests bytea,
  hash bytea NOT NULL,
  PRIMARY KEY (thread_key, checkpoint_ns, checkpoint_id, task_id, idx)
);

-- Checkpoints removed by prune(): their hashes keep the chain of the survivors verifiable.
CREATE TABLE veridex_checkpoint_pruned (
  thread_key bigint NOT NULL,
  checkpoint_ns text NOT NULL,
  checkpoint_id text NOT NULL,
  hash bytea NOT NULL,
  PRIMARY KEY (thread_key, checkpoint_ns, checkpoint_id)
);
