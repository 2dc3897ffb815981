import { canonicalJson } from './canonical-json.js';
import { checkSignatures, type SignatureCheck } from './check-signatures.js';
import { encodeBase64, preAuthEncoding } from './dsse.js';
import { isHashHex, leafHash } from './merkle-tree.js';
import type { EvidenceSigner, EvidenceVerifier } from './signer.js';

/** Format version written into every tree head. */
export const TREE_HEAD_FORMAT = 'veridex.tree-head/v1';

/** DSSE payload type a tree head is signed under, so its signature is never valid for anything else. */
export const TREE_HEAD_PAYLOAD_TYPE = 'application/vnd.veridex.tree-head+json';

/**
 * What a tree head states (RFC 9162's signed tree head, as JSON): the log had `treeSize`
 * entries and their Merkle root was `rootHash` at `timestamp`. A `thread` head is over one
 * thread's audit events; a `global` head is over every thread head recorded, in recording order,
 * so one published global head vouches for every thread at once.
 */
export interface TreeHead {
  format: typeof TREE_HEAD_FORMAT;
  scope: 'thread' | 'global';
  /** The thread, for `thread` heads; absent for `global` ones. */
  threadId?: string;
  treeSize: number;
  /** Lower-case hex SHA-256 Merkle root (RFC 9162 MTH). */
  rootHash: string;
  /** ISO 8601 time the head was signed. */
  timestamp: string;
}

/** A tree head with its signatures (DSSE pre-authentication encoding of the canonical head). */
export interface SignedTreeHead extends TreeHead {
  signatures: Array<{ keyid: string; sig: string }>;
}

/** Which log a head is about: `thread:<id>` or `global`. Heads of one log must be consistent. */
export function headLog(head: Pick<TreeHead, 'scope' | 'threadId'>): string {
  return head.scope === 'global' ? 'global' : `thread:${head.threadId}`;
}

/** The signed fields of a head (anything else a file or bundle adds is ignored). */
export function unsignedHead(head: TreeHead): TreeHead {
  return {
    format: head.format,
    scope: head.scope,
    ...(head.scope === 'thread' ? { threadId: head.threadId } : {}),
    treeSize: head.treeSize,
    rootHash: head.rootHash,
    timestamp: head.timestamp,
  };
}

/** The bytes a head's signatures cover: PAE(payload type, canonical JSON of the signed fields). */
export function treeHeadMessage(head: TreeHead): Uint8Array {
  return preAuthEncoding(
    TREE_HEAD_PAYLOAD_TYPE,
    new TextEncoder().encode(canonicalJson(unsignedHead(head))),
  );
}

/**
 * Signs a tree head with every signer (the agent's evidence key, plus counter-signers).
 * @example const head = signTreeHead({ format: TREE_HEAD_FORMAT, scope: 'thread', threadId, treeSize: tree.size, rootHash: tree.root(), timestamp }, [signer]);
 */
export function signTreeHead(head: TreeHead, signers: readonly EvidenceSigner[]): SignedTreeHead {
  const message = treeHeadMessage(head);
  return {
    ...unsignedHead(head),
    signatures: signers.map((signer) => ({
      keyid: signer.keyId,
      sig: encodeBase64(signer.sign(message)),
    })),
  };
}

/**
 * The leaf of a thread head in the global tree: SHA-256(0x00 || canonical JSON of its signed
 * fields). Signatures are left out so that a head counter-signed later is still the same leaf.
 */
export function headLeafHash(head: TreeHead): string {
  return leafHash(new TextEncoder().encode(canonicalJson(unsignedHead(head))));
}

/** A short description of a head for messages: `thread "t1" at 12 events` or `the global log at 3 heads`. */
export function describeHead(head: Pick<TreeHead, 'scope' | 'threadId' | 'treeSize'>): string {
  return head.scope === 'global'
    ? `the global log at ${head.treeSize} thread head(s)`
    : `thread "${head.threadId}" at ${head.treeSize} event(s)`;
}

/** The outcome of {@link checkTreeHead}. */
export interface TreeHeadCheck {
  /** The head, when its shape is right (even if a signature fails). */
  head: SignedTreeHead | undefined;
  signatures: SignatureCheck[];
  /** Empty when the head is well formed and signed by a trusted key, with no failing signature. */
  problems: string[];
}

/**
 * Checks a tree head from an untrusted source (a bundle, a witness file): its shape and its
 * signatures with the trusted `keys`. Never throws.
 */
export function checkTreeHead(value: unknown, keys: readonly EvidenceVerifier[]): TreeHeadCheck {
  const shape = shapeProblem(value);
  if (shape) return { head: undefined, signatures: [], problems: [shape] };
  const head = value as SignedTreeHead;
  let message: Uint8Array;
  try {
    message = treeHeadMessage(head);
  } catch {
    return { head: undefined, signatures: [], problems: ['tree head cannot be canonicalised'] };
  }
  const { signatures, problems } = checkSignatures(
    message,
    head.signatures,
    keys,
    'the head or its signature was changed',
  );
  return { head, signatures, problems };
}

function shapeProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return 'tree head is not a JSON object';
  }
  const head = value as Record<string, unknown>;
  if (head.format !== TREE_HEAD_FORMAT) return `tree head format is not "${TREE_HEAD_FORMAT}"`;
  if (head.scope !== 'thread' && head.scope !== 'global') {
    return 'tree head scope is neither "thread" nor "global"';
  }
  if (head.scope === 'thread' ? typeof head.threadId !== 'string' : head.threadId !== undefined) {
    return 'tree head thread id does not fit its scope';
  }
  if (
    typeof head.treeSize !== 'number' ||
    !Number.isSafeInteger(head.treeSize) ||
    head.treeSize < 0
  ) {
    return 'tree head size is not a non-negative integer';
  }
  if (!isHashHex(head.rootHash)) return 'tree head root hash is not 64 lower-case hex digits';
  if (typeof head.timestamp !== 'string' || Number.isNaN(Date.parse(head.timestamp))) {
    return 'tree head timestamp is not a date';
  }
  if (!Array.isArray(head.signatures) || head.signatures.length === 0) {
    return 'tree head has no signatures';
  }
  return undefined;
}
