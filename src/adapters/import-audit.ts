import { type AuditLog, GENESIS_HASH, hashTraceEvent, verifyChain } from '../audit/index.js';
import { VeridexError } from '../errors/index.js';
import type { PortableAudit } from './portable-run.js';

/**
 * Checks a document's audit chain before anything is written: one thread, every hash
 * recomputed, every link intact from the genesis hash, and the stated position (`eventCount`,
 * `headHash`) equal to the chain's. Editing, dropping or reordering an event fails here; a
 * forger who recomputes every hash is caught only by a signed tree head or by anyone holding
 * an earlier head (compare `headHash` with a published one).
 *
 * @throws VeridexError `audit_chain_broken` naming the first bad event.
 */
export function checkPortableAudit(audit: PortableAudit, threadId: string): void {
  const broken = (reason: string): never => {
    throw new VeridexError('audit_chain_broken', `The run's audit chain is broken: ${reason}.`, {
      details: { threadId },
    });
  };
  const foreign = audit.events.findIndex((event) => event.threadId !== threadId);
  if (foreign >= 0) broken(`event ${foreign} belongs to another thread`);
  const verification = verifyChain(audit.events);
  if (!verification.valid) {
    broken(`event ${verification.brokenAt} (${verification.eventId}): ${verification.reason}`);
  }
  if (audit.eventCount !== audit.events.length) {
    broken(`eventCount says ${audit.eventCount}, the chain has ${audit.events.length} events`);
  }
  const head = audit.events.at(-1)?.hash ?? GENESIS_HASH;
  if (audit.headHash !== head) broken(`headHash ${audit.headHash} is not the chain's head ${head}`);
}

/**
 * Appends a checked chain to an empty thread of `log`'s store, event by event as it was: same
 * ids, timestamps and payloads, so the store links and hashes them to the very same hashes and
 * the thread's chain continues from the source's head. Deterministic event ids the resumed
 * graph writes again (e.g. `approval_requested`) are then no-ops, as in the source.
 *
 * @throws VeridexError `audit_chain_broken` if the store hashed an event differently.
 */
export async function appendPortableAudit(log: AuditLog, audit: PortableAudit): Promise<void> {
  if (audit.events.length === 0) return;
  const threadId = audit.events[0]!.threadId;
  const stored = await log.store.append(
    threadId,
    audit.events.map(({ previousEventHash: _previous, hash: _hash, ...draft }) => draft),
    hashTraceEvent,
  );
  const mismatch = stored.findIndex((event, index) => event.hash !== audit.events[index]?.hash);
  if (mismatch >= 0) {
    throw new VeridexError(
      'audit_chain_broken',
      `The target audit store linked event ${mismatch} of thread "${threadId}" differently from the source; its chain was not empty or it rewrote the event.`,
      { details: { threadId, index: mismatch } },
    );
  }
}
