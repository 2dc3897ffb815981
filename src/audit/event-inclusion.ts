import { VeridexError } from '../errors/index.js';
import { eventLeafHash, eventTree } from './event-tree.js';
import { verifyInclusion } from './merkle-proofs.js';
import type { EvidenceVerifier } from './signer.js';
import { hashTraceEvent, type TraceEvent } from './trace-event.js';
import { checkTreeHead, type SignedTreeHead } from './tree-head.js';

/** Format of an {@link EventInclusionProof}. */
export const EVENT_INCLUSION_FORMAT = 'veridex.event-inclusion/v1';

/**
 * One event with the RFC 9162 audit path that proves it is leaf `index` of the tree a signed head
 * vouches for: to show an auditor one decision without handing over the rest of the thread.
 */
export interface EventInclusionProof {
  format: typeof EVENT_INCLUSION_FORMAT;
  treeHead: SignedTreeHead;
  index: number;
  event: TraceEvent;
  proof: string[];
}

/**
 * Cuts the inclusion proof of one event out of a thread's events and the signed head over them
 * (e.g. a bundle's `body.events` and `body.log.treeHead`).
 * @throws VeridexError `config_invalid` when the event is not there or the head is not over `events`.
 * @example const excerpt = proveEventInclusion(body.events, body.log.treeHead, decision.eventId);
 */
export function proveEventInclusion(
  events: readonly TraceEvent[],
  treeHead: SignedTreeHead,
  eventId: string,
): EventInclusionProof {
  const tree = eventTree(events);
  if (treeHead.treeSize !== tree.size || treeHead.rootHash !== tree.root()) {
    throw new VeridexError('config_invalid', 'The tree head is not the head of these events.');
  }
  const index = events.findIndex((event) => event.eventId === eventId);
  if (index < 0) {
    throw new VeridexError('config_invalid', `Event "${eventId}" is not among the events.`);
  }
  return {
    format: EVENT_INCLUSION_FORMAT,
    treeHead,
    index,
    event: events[index]!,
    proof: tree.inclusionProof(index),
  };
}

/**
 * Verifies an {@link EventInclusionProof} offline: the head is signed by one of `keys`, the event
 * hashes to its recorded hash (so its content is what the leaf commits to), and the audit path
 * leads from that leaf to the signed root. Never throws.
 */
export function verifyEventInclusion(
  value: unknown,
  options: { keys: readonly EvidenceVerifier[] },
): { valid: boolean; reasons: string[]; event?: TraceEvent; treeHead?: SignedTreeHead } {
  const excerpt = value as Partial<EventInclusionProof> | null;
  if (
    typeof excerpt !== 'object' ||
    excerpt === null ||
    excerpt.format !== EVENT_INCLUSION_FORMAT
  ) {
    return { valid: false, reasons: [`not a "${EVENT_INCLUSION_FORMAT}" object`] };
  }
  const head = checkTreeHead(excerpt.treeHead, options.keys);
  const reasons = head.problems.map((problem) => `tree head: ${problem}`);
  const event = excerpt.event;
  let leaf: string | undefined;
  try {
    if (hashTraceEvent(event as TraceEvent) !== event?.hash) {
      reasons.push('the event does not hash to its recorded hash (it was changed)');
    } else {
      leaf = eventLeafHash(event);
    }
  } catch {
    reasons.push('the event cannot be hashed');
  }
  if (head.head && head.head.scope === 'thread' && event?.threadId !== head.head.threadId) {
    reasons.push('the event belongs to another thread than the tree head');
  }
  if (
    head.head &&
    leaf !== undefined &&
    !verifyInclusion(
      excerpt.index as number,
      head.head.treeSize,
      leaf,
      excerpt.proof ?? [],
      head.head.rootHash,
    )
  ) {
    reasons.push('the inclusion proof does not lead to the signed root');
  }
  return {
    valid: reasons.length === 0,
    reasons,
    ...(event && reasons.length === 0 ? { event } : {}),
    ...(head.head ? { treeHead: head.head } : {}),
  };
}
