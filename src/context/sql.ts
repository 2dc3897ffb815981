/** All SQL of the context module. Tables are created by migration 0005_context.sql. */

/** A thread's most recent cached summaries, newest first. */
export const RECENT_SUMMARIES = `
SELECT covered_units, span_hash, summary, summary_tokens, summarizer
FROM veridex_context_summaries WHERE thread_id = $1 ORDER BY seq DESC LIMIT $2`;

/** Inserts an entry (keeping an existing one with the same span) and trims the thread to $7 older entries plus it. */
export const PUT_SUMMARY = `
WITH inserted AS (
  INSERT INTO veridex_context_summaries
    (thread_id, span_hash, covered_units, summarizer, summary, summary_tokens)
  VALUES ($1, $2, $3, $4, $5, $6)
  ON CONFLICT (thread_id, span_hash) DO NOTHING
  RETURNING 1
)
DELETE FROM veridex_context_summaries
WHERE EXISTS (SELECT 1 FROM inserted) AND thread_id = $1 AND span_hash <> $2 AND seq NOT IN (
  SELECT seq FROM veridex_context_summaries WHERE thread_id = $1 ORDER BY seq DESC LIMIT $7
)`;

/** Serialises writers of one ledger for the rest of the transaction. */
export const LOCK_LEDGER = `SELECT pg_advisory_xact_lock(hashtext($1))`;

/** Appends one envelope (the caller holds the ledger lock and checked the version). */
export const INSERT_ENVELOPE = `
INSERT INTO veridex_context_ledger (ledger_id, version, key_id, signature, parents, envelope)
VALUES ($1, $2, $3, $4, $5::bigint[], $6)`;

const ENTRY_COLUMNS = `version::text AS version, envelope, committed_at, rolled_back_at, rollback_reason`;

/** One entry by version. */
export const GET_ENTRY = `
SELECT ${ENTRY_COLUMNS} FROM veridex_context_ledger WHERE ledger_id = $1 AND version = $2`;

/** Every entry of a ledger, oldest first. */
export const LIST_ENTRIES = `
SELECT ${ENTRY_COLUMNS} FROM veridex_context_ledger WHERE ledger_id = $1 ORDER BY version`;

/** The newest entry not rolled back. */
export const HEAD_ENTRY = `
SELECT ${ENTRY_COLUMNS} FROM veridex_context_ledger
WHERE ledger_id = $1 AND rolled_back_at IS NULL ORDER BY version DESC LIMIT 1`;

/** The highest version ever stored (rolled back or not). */
export const MAX_VERSION = `
SELECT max(version)::text AS max_version FROM veridex_context_ledger WHERE ledger_id = $1`;

/** Marks one version as abandoned by a rollback (the envelope itself is never edited). */
export const MARK_ROLLED_BACK = `
UPDATE veridex_context_ledger SET rolled_back_at = now(), rollback_reason = $3
WHERE ledger_id = $1 AND version = $2 AND rolled_back_at IS NULL`;

/** What pruning needs: versions, parents and rollback marks, newest first. */
export const LIST_VERSIONS_AND_PARENTS = `
SELECT version::text AS version, parents::text[] AS parents, rolled_back_at IS NOT NULL AS rolled_back
FROM veridex_context_ledger WHERE ledger_id = $1 ORDER BY version DESC`;

/** Deletes the pruned versions. */
export const DELETE_VERSIONS = `
DELETE FROM veridex_context_ledger WHERE ledger_id = $1 AND version = ANY($2::bigint[])`;
