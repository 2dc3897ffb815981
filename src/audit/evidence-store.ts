import type { Database } from '../db/index.js';
import type { EvidenceBundle } from './seal-evidence.js';
import { contentHash } from './sha256.js';

// Table: migration 0020_evidence.sql.
const UPSERT = `
INSERT INTO veridex_evidence (thread_id, run_id, bundle, bundle_hash)
VALUES ($1, $2, $3, $4)
ON CONFLICT (thread_id, run_id)
DO UPDATE SET bundle = EXCLUDED.bundle, bundle_hash = EXCLUDED.bundle_hash, sealed_at = now()`;

const LATEST = `
SELECT bundle, bundle_hash, sealed_at FROM veridex_evidence
WHERE thread_id = $1 ORDER BY sealed_at DESC, run_id DESC LIMIT 1`;

/**
 * Keeps a sealed bundle in the database, under its thread and run (a run sealed again replaces
 * its copy), for the approvals service to serve (`GET /api/threads/{id}/evidence`).
 */
export async function storeEvidence(
  db: Database,
  threadId: string,
  runId: string,
  bundle: EvidenceBundle,
): Promise<void> {
  await db.query(UPSERT, [threadId, runId, JSON.stringify(bundle), contentHash(bundle)]);
}

/** The thread's most recently sealed bundle, with its content hash; undefined when none. */
export async function latestEvidence(
  db: Database,
  threadId: string,
): Promise<{ bundle: EvidenceBundle; bundleHash: string; sealedAt: string } | undefined> {
  const { rows } = await db.query<{ bundle: EvidenceBundle; bundle_hash: string; sealed_at: Date }>(
    LATEST,
    [threadId],
  );
  const row = rows[0];
  if (!row) return undefined;
  return { bundle: row.bundle, bundleHash: row.bundle_hash, sealedAt: row.sealed_at.toISOString() };
}
