import { canonicalJson } from '../audit/canonical-json.js';
import { sha256Hex } from '../audit/sha256.js';

/**
 * The deterministic id of the approval request for `subjectId` (a tool call id) in a thread, at
 * a revision (each edit opens the next). Statements are signed over it, so a verifier that
 * recomputes it from the bundle's thread knows a signature was made for this thread's call —
 * not carried over from another thread.
 */
export function deriveApprovalId(threadId: string, subjectId: string, revision = 0): string {
  return `apr_${sha256Hex(canonicalJson([threadId, subjectId, revision])).slice(0, 24)}`;
}
