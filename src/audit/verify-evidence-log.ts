import { EVIDENCE_FORMAT_V1, type EvidenceBody } from './evidence-body.js';
import { verifyConsistency } from './merkle-proofs.js';
import type { MerkleTree } from './merkle-tree.js';
import type { EvidenceVerifier } from './signer.js';
import type { TraceEvent } from './trace-event.js';
import { checkTreeHead, describeHead, type TreeHead } from './tree-head.js';

/** Where a verified bundle sits in its thread's log, and how it relates to an earlier one. */
export interface EvidenceLogCheck {
  /** The tree over the bundle's events (computed; equal to the signed head's in a valid v2 bundle). */
  treeSize: number;
  rootHash: string;
  /** The previous head the bundle links to (v2), and whether its consistency proof verifies. */
  previous?: { treeSize: number; rootHash: string; timestamp: string; consistent: boolean };
  /** The `previous` option's head, and whether this bundle is consistent with it. */
  since?: {
    kind: 'bundle' | 'head';
    treeSize: number;
    rootHash: string;
    timestamp: string;
    consistent: boolean;
    /** Hashes in the RFC 9162 consistency proof that was checked. */
    proofLength: number;
  };
}

/**
 * Checks a v2 body's signed tree head against the tree of its events, and its link to the
 * previous head (signature, thread, consistency proof). v1 bodies have neither: nothing to check.
 */
export function checkEvidenceLog(
  body: EvidenceBody,
  tree: MerkleTree | undefined,
  keys: readonly EvidenceVerifier[],
): { problems: string[]; log?: EvidenceLogCheck } {
  if (body.format === EVIDENCE_FORMAT_V1) {
    return tree
      ? { problems: [], log: { treeSize: tree.size, rootHash: tree.root() } }
      : { problems: [] };
  }
  const log = body.log;
  if (typeof log !== 'object' || log === null) return { problems: ['bundle has no tree head'] };
  const problems: string[] = [];
  const head = checkTreeHead(log.treeHead, keys);
  problems.push(...head.problems.map((problem) => `tree head: ${problem}`));
  if (head.head && (head.head.scope !== 'thread' || head.head.threadId !== body.threadId)) {
    problems.push('tree head is not a head of this thread');
  }
  if (!tree) return { problems };
  const result: EvidenceLogCheck = { treeSize: tree.size, rootHash: tree.root() };
  if (head.head) {
    if (head.head.treeSize !== tree.size) problems.push('tree head size does not match the events');
    else if (head.head.rootHash !== result.rootHash) {
      problems.push(
        'tree head root does not match the events (an event was changed, dropped, inserted or reordered)',
      );
    }
  }
  if (log.previous !== undefined) {
    const previous = checkTreeHead(log.previous?.treeHead, keys);
    problems.push(...previous.problems.map((problem) => `previous tree head: ${problem}`));
    const prior = previous.head;
    if (prior) {
      if (prior.scope !== 'thread' || prior.threadId !== body.threadId) {
        problems.push('previous tree head is not a head of this thread');
      }
      const consistent =
        prior.treeSize < tree.size &&
        Array.isArray(log.previous.consistency) &&
        verifyConsistency(
          prior.treeSize,
          tree.size,
          prior.rootHash,
          result.rootHash,
          log.previous.consistency,
        );
      if (!consistent) {
        problems.push(
          `the bundle does not extend its previous tree head (${describeHead(prior)}, ${prior.timestamp}): the consistency proof does not verify`,
        );
      }
      result.previous = {
        treeSize: prior.treeSize,
        rootHash: prior.rootHash,
        timestamp: prior.timestamp,
        consistent,
      };
    }
  }
  return { problems, log: result };
}

/** An earlier view of the thread to check a bundle against: a verified older bundle or a head. */
export interface EarlierView {
  kind: 'bundle' | 'head';
  head: TreeHead;
  /** The older bundle's events, to name the first one that changed. */
  events?: readonly TraceEvent[];
}

/**
 * Checks that the bundle's log is an honest extension of an earlier view: every event the older
 * bundle or head covered is still there, unchanged and in order — proven with an RFC 9162
 * consistency proof from the older size to the newer. Returns the problems (naming the first
 * changed event when the older bundle's events are known) and the outcome.
 */
export function checkSince(
  body: EvidenceBody,
  tree: MerkleTree,
  earlier: EarlierView,
): { problems: string[]; since: NonNullable<EvidenceLogCheck['since']> } {
  const { head } = earlier;
  const what = earlier.kind === 'bundle' ? 'the older bundle' : 'the older head';
  const base = {
    kind: earlier.kind,
    treeSize: head.treeSize,
    rootHash: head.rootHash,
    timestamp: head.timestamp,
  };
  if (head.scope !== 'thread' || head.threadId !== body.threadId) {
    const other = head.scope === 'global' ? 'the global log' : `thread "${head.threadId}"`;
    return {
      problems: [`${what} is of ${other}, this bundle of thread "${body.threadId}"`],
      since: { ...base, consistent: false, proofLength: 0 },
    };
  }
  if (head.treeSize > tree.size) {
    return {
      problems: [
        `${what} covered ${head.treeSize} events (${head.timestamp}) and this bundle has only ${tree.size}: events were dropped`,
      ],
      since: { ...base, consistent: false, proofLength: 0 },
    };
  }
  const proof = tree.consistencyProof(head.treeSize);
  const consistent = verifyConsistency(head.treeSize, tree.size, head.rootHash, tree.root(), proof);
  const since = { ...base, consistent, proofLength: proof.length };
  if (consistent) return { problems: [], since };
  const index = earlier.events?.findIndex((event, at) => body.events[at]?.hash !== event.hash);
  const changed = index !== undefined && index >= 0 ? earlier.events![index]! : undefined;
  return {
    problems: [
      changed
        ? `this bundle is not consistent with ${what} (${head.treeSize} events, ${head.timestamp}): its event ${index} (${changed.type} ${changed.eventId}) was rewritten, dropped, inserted or reordered`
        : `this bundle is not consistent with ${what} (${head.treeSize} events, ${head.timestamp}): events it covered were rewritten, dropped, inserted or reordered`,
    ],
    since,
  };
}
