-- Four-tier memory (episodic, semantic and procedural tiers; working memory lives in graph
-- state). Every row is one immutable version: a change inserts a new version and stamps the
-- old one with invalidated_at, so history can be audited. Nothing is ever deleted by decay.
--
-- Vectors: embeddings are always stored as float32 little-endian bytes (embedding_bytes),
-- which every PostgreSQL can hold. Where pgvector is available, MemoryManager.setup() adds a
-- `vector` column and fills it; that DDL is a conditional setup step, not part of this
-- migration, because the server may not have the extension (see src/memory/vector-setup.ts).
CREATE TABLE veridex_memory_records (
  id text PRIMARY KEY,
  write_id text NOT NULL UNIQUE,
  tier text NOT NULL CHECK (tier IN ('episodic', 'semantic', 'procedural')),
  namespace text[] NOT NULL,
  -- Labels joined with '.', which labels may not contain; prefix searches use LIKE on it.
  namespace_path text NOT NULL,
  key text NOT NULL,
  version integer NOT NULL CHECK (version >= 1),
  content text NOT NULL,
  subject text,
  predicate text,
  object text,
  confidence double precision NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
  tags text[] NOT NULL DEFAULT '{}',
  value jsonb,
  thread_id text NOT NULL,
  run_id text NOT NULL,
  turn_index integer NOT NULL,
  source text NOT NULL,
  trust text NOT NULL CHECK (trust IN ('high', 'medium', 'low')),
  observed_at timestamptz NOT NULL,
  valid_from timestamptz NOT NULL,
  invalidated_at timestamptz,
  invalidated_by text,
  invalidation_reason text,
  lineage_created_at timestamptz NOT NULL,
  stored_at timestamptz NOT NULL,
  strength double precision NOT NULL DEFAULT 1,
  reinforced_at timestamptz NOT NULL,
  recall_count integer NOT NULL DEFAULT 0,
  embedding_bytes bytea,
  -- 256-bit random-hyperplane sketch of the embedding: a cheap Hamming pre-filter where
  -- pgvector is missing. NULL in pgvector mode.
  sketch bit varying(256),
  -- Inverted-file list of the embedding (nearest trained centroid); NULL until trained.
  cluster integer,
  search_vector tsvector GENERATED ALWAYS AS (
    to_tsvector('english'::regconfig,
      coalesce(subject, '') || ' ' || coalesce(predicate, '') || ' ' || coalesce(object, '') || ' ' || content)
  ) STORED,
  UNIQUE (namespace_path, key, version)
);

-- At most one current version per key: concurrent writers cannot both make one current.
CREATE UNIQUE INDEX veridex_memory_records_current
  ON veridex_memory_records (namespace_path, key) WHERE invalidated_at IS NULL;
-- fastupdate off: with PostgreSQL's default pending list, every search scans all entries
-- inserted since the last vacuum, which made recall after bulk writes several times slower.
CREATE INDEX veridex_memory_records_search ON veridex_memory_records USING gin (search_vector)
  WITH (fastupdate = off);
CREATE INDEX veridex_memory_records_namespace
  ON veridex_memory_records (namespace_path text_pattern_ops, tier);
CREATE INDEX veridex_memory_records_thread ON veridex_memory_records (thread_id);
CREATE INDEX veridex_memory_records_cluster ON veridex_memory_records (cluster, namespace_path);
CREATE INDEX veridex_memory_records_tags ON veridex_memory_records USING gin (tags)
  WITH (fastupdate = off);

CREATE TABLE veridex_memory_links (
  from_id text NOT NULL REFERENCES veridex_memory_records (id),
  to_id text NOT NULL REFERENCES veridex_memory_records (id),
  type text NOT NULL CHECK (type IN ('relates_to', 'supersedes', 'derived_from')),
  weight double precision NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (from_id, to_id, type)
);
CREATE INDEX veridex_memory_links_to ON veridex_memory_links (to_id);

-- Trained inverted-file centroids (k-means over stored embeddings), one set per generation.
CREATE TABLE veridex_memory_centroids (
  generation integer NOT NULL,
  cluster integer NOT NULL,
  dimensions integer NOT NULL,
  centroid bytea NOT NULL,
  PRIMARY KEY (generation, cluster)
);

-- Per-schema memory settings, e.g. the vector mode chosen at setup and the embedding size.
CREATE TABLE veridex_memory_settings (
  name text PRIMARY KEY,
  value text NOT NULL
);

-- Write-quota reservations (memoryRules.writeQuota): one row per allowed write id, so a
-- replayed proposal re-uses its reservation instead of consuming the quota twice.
CREATE TABLE veridex_memory_quota_uses (
  thread_id text NOT NULL,
  write_id text NOT NULL,
  reserved_at timestamptz NOT NULL,
  PRIMARY KEY (thread_id, write_id)
);

-- How many records contain each full-text lexeme (counted on insert, never decremented: an
-- estimate). Recall uses it to drop very common words from the full-text query, which would
-- otherwise make PostgreSQL rank a large part of the table (IDF-style pruning).
CREATE TABLE veridex_memory_terms (
  lexeme text PRIMARY KEY,
  frequency bigint NOT NULL
);
