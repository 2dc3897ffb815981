// All SQL of the soak harness. Its tables live in the run's own schema next to the library's,
// prefixed `soak_`; they are the harness's bookkeeping and witnesses, never read by the library.

/** The harness's tables, and a witness of every approval state change on the database clock. */
export const CREATE_SOAK_TABLES = `
CREATE TABLE soak_threads (
  id text PRIMARY KEY,
  seq integer NOT NULL,
  fate text NOT NULL,
  amount text NOT NULL,
  to_address text NOT NULL,
  state text NOT NULL DEFAULT 'new',
  owner text,
  advances integer NOT NULL DEFAULT 0,
  retries integer NOT NULL DEFAULT 0,
  error_code text,
  not_before timestamptz,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  finished_at timestamptz
);
CREATE INDEX soak_threads_claim ON soak_threads (state, seq) WHERE owner IS NULL;
CREATE TABLE soak_decisions (
  approval_id text NOT NULL,
  decision_id text NOT NULL,
  approver text NOT NULL,
  decision text NOT NULL,
  process text NOT NULL,
  status_after text NOT NULL,
  at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (approval_id, decision_id)
);
CREATE TABLE soak_refusals (
  approval_id text NOT NULL,
  approver text NOT NULL,
  code text NOT NULL,
  process text NOT NULL,
  at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE TABLE soak_approval_log (
  approval_id text NOT NULL,
  old_status text,
  new_status text NOT NULL,
  decisions integer NOT NULL,
  expires_at timestamptz NOT NULL,
  at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE FUNCTION soak_log_approval() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' OR NEW.status IS DISTINCT FROM OLD.status
     OR jsonb_array_length(NEW.decisions) IS DISTINCT FROM jsonb_array_length(OLD.decisions) THEN
    INSERT INTO soak_approval_log (approval_id, old_status, new_status, decisions, expires_at)
    VALUES (NEW.id, CASE WHEN TG_OP = 'UPDATE' THEN OLD.status END, NEW.status,
            jsonb_array_length(NEW.decisions), NEW.expires_at);
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER soak_log_approval AFTER INSERT OR UPDATE ON veridex_approvals
  FOR EACH ROW EXECUTE FUNCTION soak_log_approval();
`;

/** Tops the run up to $1 unfinished threads; rows come from $2 (a JSON array of thread specs). */
export const INSERT_THREADS = `
INSERT INTO soak_threads (id, seq, fate, amount, to_address)
SELECT t.id, t.seq, t.fate, t.amount, t.to_address
FROM jsonb_to_recordset($1::jsonb) AS t(id text, seq integer, fate text, amount text, to_address text)`;

export const COUNT_UNFINISHED = `
SELECT count(*)::int AS unfinished FROM soak_threads WHERE state IN ('new', 'running', 'waiting')`;

/**
 * Claims up to $2 threads for worker $1: new ones, in-flight ones a dead worker left behind,
 * and waiting ones whose approvals are all settled or past their deadline (database clock).
 */
export const CLAIM_THREADS = `
WITH candidates AS (
  SELECT t.id FROM soak_threads t
  WHERE t.owner IS NULL AND t.state IN ('new', 'running', 'waiting')
    AND (t.not_before IS NULL OR t.not_before <= clock_timestamp())
    AND (t.state <> 'waiting' OR NOT EXISTS (
      SELECT 1 FROM veridex_approvals a
      WHERE a.thread_id = t.id AND a.status = 'pending' AND a.expires_at > clock_timestamp()))
  ORDER BY t.state = 'new', t.seq
  LIMIT $2
  FOR UPDATE SKIP LOCKED
)
UPDATE soak_threads t SET owner = $1, advances = t.advances + 1
FROM candidates c WHERE t.id = c.id
RETURNING t.id, t.seq, t.fate, t.amount, t.to_address, t.state, t.retries`;

/** Threads worker $1 owns (after a claim whose answer was lost to a dropped connection). */
export const OWNED_THREADS = `
SELECT id, seq, fate, amount, to_address, state, retries FROM soak_threads WHERE owner = $1`;

/** Hands a thread back with its new state ($3) and, for failures, the error code ($4). */
export const RELEASE_THREAD = `
UPDATE soak_threads
SET owner = NULL, state = $3, error_code = $4, not_before = $5,
    retries = retries + $6,
    finished_at = CASE WHEN $3 IN ('completed', 'failed') THEN clock_timestamp() END
WHERE id = $1 AND owner = $2`;

/** Frees every thread of a worker that died. */
export const RELEASE_WORKER = `UPDATE soak_threads SET owner = NULL WHERE owner = $1`;

export const RECORD_DECISION = `
INSERT INTO soak_decisions (approval_id, decision_id, approver, decision, process, status_after)
VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`;

export const RECORD_REFUSAL = `
INSERT INTO soak_refusals (approval_id, approver, code, process) VALUES ($1, $2, $3, $4)`;

/** The fates of threads $1 (text[]), for the approvers. */
export const FATES_OF = `SELECT id, fate FROM soak_threads WHERE id = ANY($1::text[])`;

/** Connections of this run (by application name), for pg_terminate_backend. */
export const TERMINATE_RANDOM = `
SELECT pid, application_name, pg_terminate_backend(pid) AS terminated
FROM (
  SELECT pid, application_name FROM pg_stat_activity
  WHERE datname = current_database() AND application_name LIKE $1 AND pid <> pg_backend_pid()
  ORDER BY random() LIMIT $2
) victims`;
