import { VeridexError } from '../errors/index.js';
import { canonicalJson } from './canonical-json.js';
import { type DsseEnvelope, encodeBase64, preAuthEncoding } from './dsse.js';
import { eventTree } from './event-tree.js';
import {
  countEventTypes,
  distinctRunIds,
  EVIDENCE_FORMAT,
  EVIDENCE_PAYLOAD_TYPE,
  type EvidenceBody,
  type EvidenceLog,
} from './evidence-body.js';
import { inconsistency } from './log-consistency.js';
import type { MerkleTree } from './merkle-tree.js';
import { type EvidenceSigner, inKeyNamespace, KEY_ID_NAMESPACE } from './signer.js';
import type { TraceEvent } from './trace-event.js';
import { type SignedTreeHead, signTreeHead, TREE_HEAD_FORMAT } from './tree-head.js';
import { verifyChain } from './verify-chain.js';

/** A signed evidence bundle: a DSSE envelope whose payload is an {@link EvidenceBody}. */
export type EvidenceBundle = DsseEnvelope;

/** What to seal. */
export interface SealEvidenceInput {
  threadId: string;
  /** The thread's complete chain, from its first event (e.g. `await audit.events(threadId)`). */
  events: readonly TraceEvent[];
  subject?: Record<string, unknown>;
  extra?: Record<string, unknown>;
  /** Default: the last event's timestamp (so equal input seals to an identical bundle). */
  createdAt?: string;
  /**
   * The thread's last signed head before this seal (e.g. the last of
   * `await audit.heads.threadHeads(threadId)`). The bundle carries it with the consistency proof
   * from it, and sealing refuses events that do not extend it.
   */
  previous?: SignedTreeHead;
}

/** A sealed bundle with its signed tree head and the tree (to publish the head to witnesses). */
export interface SealedBundle {
  bundle: EvidenceBundle;
  treeHead: SignedTreeHead;
  tree: MerkleTree;
}

/**
 * Seals a thread's events into a signed evidence bundle anyone can verify offline with
 * {@link verifyEvidence} or `veridex verify`. The body is canonical JSON (RFC 8785); every
 * signer signs DSSE's pre-authentication encoding of it (e.g. agent key + counter-signer), and
 * the signed tree head (RFC 9162 Merkle root over the events) it carries.
 *
 * @throws VeridexError `audit_chain_broken` if `events` are not an intact chain of `threadId`;
 *   `audit_log_inconsistent` if they do not extend `previous`; `config_invalid` without signers;
 *   `signer_key_invalid` for a signer whose key id is not in its algorithm's namespace
 *   (`ed25519:…`, `hmac:…`).
 * @example
 * const bundle = sealEvidence({ threadId, events: await audit.events(threadId) }, [signer]);
 * writeFileSync(`${threadId}.json`, JSON.stringify(bundle));
 */
export function sealEvidence(
  input: SealEvidenceInput,
  signers: readonly EvidenceSigner[],
): EvidenceBundle {
  return sealEvidenceWithHead(input, signers).bundle;
}

/** {@link sealEvidence}, also returning the signed tree head and the tree. */
export function sealEvidenceWithHead(
  input: SealEvidenceInput,
  signers: readonly EvidenceSigner[],
): SealedBundle {
  if (signers.length === 0) {
    throw new VeridexError(
      'config_invalid',
      'sealEvidence needs at least one signer (Ed25519Signer or HmacSigner).',
    );
  }
  const misnamed = signers.find((signer) => !inKeyNamespace(signer));
  if (misnamed) {
    throw new VeridexError(
      'signer_key_invalid',
      `A ${misnamed.algorithm} signer's key id must start with "${KEY_ID_NAMESPACE[misnamed.algorithm] ?? '?'}"; got "${misnamed.keyId}".`,
    );
  }
  // Links only: the store hashed these events, and every verifier recomputes the hashes.
  const chain = verifyChain(input.events, { recomputeHashes: false });
  if (!chain.valid) {
    throw new VeridexError(
      'audit_chain_broken',
      `Refusing to seal thread "${input.threadId}": event ${chain.brokenAt} breaks the chain (${chain.reason}).`,
      { details: { threadId: input.threadId, brokenAt: chain.brokenAt } },
    );
  }
  const foreign = input.events.find((event) => event.threadId !== input.threadId);
  if (foreign) {
    throw new VeridexError(
      'audit_chain_broken',
      `Refusing to seal thread "${input.threadId}": it contains events of thread "${foreign.threadId}".`,
    );
  }
  const createdAt = input.createdAt ?? input.events.at(-1)?.timestamp ?? new Date(0).toISOString();
  const tree = eventTree(input.events);
  const treeHead = signTreeHead(
    {
      format: TREE_HEAD_FORMAT,
      scope: 'thread',
      threadId: input.threadId,
      treeSize: tree.size,
      rootHash: tree.root(),
      timestamp: createdAt,
    },
    signers,
  );
  const log: EvidenceLog = { treeHead };
  const previous = input.previous;
  if (previous) {
    const why =
      previous.scope !== 'thread' || previous.threadId !== input.threadId
        ? 'the previous head is not one of this thread'
        : inconsistency(tree, previous);
    if (why) {
      throw new VeridexError(
        'audit_log_inconsistent',
        `Refusing to seal thread "${input.threadId}": ${why}.`,
        { details: { threadId: input.threadId, previousSize: previous.treeSize } },
      );
    }
    if (previous.treeSize < tree.size) {
      log.previous = { treeHead: previous, consistency: tree.consistencyProof(previous.treeSize) };
    }
  }
  const body: EvidenceBody = {
    format: EVIDENCE_FORMAT,
    threadId: input.threadId,
    runIds: distinctRunIds(input.events),
    createdAt,
    ...(input.subject ? { subject: input.subject } : {}),
    ...(input.extra ? { extra: input.extra } : {}),
    chain: { length: chain.length, head: chain.head },
    counts: countEventTypes(input.events),
    events: [...input.events],
    log,
  };
  const payload = new TextEncoder().encode(canonicalJson(body));
  const message = preAuthEncoding(EVIDENCE_PAYLOAD_TYPE, payload);
  return {
    bundle: {
      payloadType: EVIDENCE_PAYLOAD_TYPE,
      payload: encodeBase64(payload),
      signatures: signers.map((signer) => ({
        keyid: signer.keyId,
        sig: encodeBase64(signer.sign(message)),
      })),
    },
    treeHead,
    tree,
  };
}
