import { VeridexError } from '../errors/index.js';
import type { AuditLog } from './audit-log.js';
import { checkWitnesses, publishHead } from './head-witness.js';
import {
  type SealEvidenceInput,
  type SealedBundle,
  sealEvidenceWithHead,
} from './seal-evidence.js';
import type { EvidenceSigner } from './signer.js';
import type { TraceEvent } from './trace-event.js';
import { describeHead } from './tree-head.js';

/**
 * Seals a thread of `audit` into an evidence bundle that links to the thread's previous signed
 * head (with the consistency proof), records the bundle's head in `audit.heads` and publishes it
 * to `audit.witnesses`. Successive bundles of a thread thereby verify as one history, and a
 * history rewritten in the database since the last seal is refused instead of sealed.
 *
 * @throws VeridexError `audit_log_inconsistent` when the thread's events do not extend a head
 *   recorded or witnessed before; `audit_chain_broken` for a broken chain.
 * @example const { bundle } = await sealAuditThread(audit, { threadId }, [signer]);
 */
export async function sealAuditThread(
  audit: AuditLog,
  input: Omit<SealEvidenceInput, 'events' | 'previous'>,
  signers: readonly EvidenceSigner[],
): Promise<SealedBundle & { events: TraceEvent[] }> {
  const events = await audit.events(input.threadId);
  const recorded = await audit.heads.threadHeads(input.threadId);
  const ahead = recorded.find((head) => head.treeSize > events.length);
  if (ahead) {
    throw new VeridexError(
      'audit_log_inconsistent',
      `Refusing to seal thread "${input.threadId}": ${describeHead(ahead)} was signed at ${ahead.timestamp}, and the thread now has only ${events.length}: events were dropped.`,
      { details: { threadId: input.threadId, treeSize: ahead.treeSize, events: events.length } },
    );
  }
  const previous = recorded.at(-1);
  const sealed = sealEvidenceWithHead(
    { ...input, events, ...(previous ? { previous } : {}) },
    signers,
  );
  await checkWitnesses(audit.witnesses, sealed.treeHead, sealed.tree);
  const stored = await audit.heads.recordThreadHead(sealed.treeHead);
  await publishHead(audit.witnesses, stored, sealed.tree);
  return { ...sealed, events };
}
