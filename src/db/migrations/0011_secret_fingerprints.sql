-- What every process needs to scrub secrets registered by another process, without the
-- values: per database one random HMAC key and one random rolling-hash base; per form of a
-- registered secret (raw, base64 at each alignment, ...) its name, length, a 20-bit tag of
-- its rolling hash (a prefilter) and its HMAC-SHA-256 (the confirmation).
CREATE TABLE veridex_secret_fingerprint_keys (
  id smallint PRIMARY KEY CHECK (id = 1),
  hmac_key text NOT NULL,
  rolling_base bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- Inserts take a transaction-level advisory lock, so rows become visible in seq order and a
-- reader that has seen seq N never misses a row committed later with a smaller one.
CREATE TABLE veridex_secret_fingerprints (
  seq bigserial PRIMARY KEY,
  name text NOT NULL,
  form text NOT NULL,
  length integer NOT NULL CHECK (length > 0),
  tag integer NOT NULL,
  hmac text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now()
);
