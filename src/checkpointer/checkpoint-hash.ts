import { hash } from 'node:crypto';
import { canonicalJson } from '../audit/index.js';

/**
 * What a checkpoint row's hash covers. `checkpoint` and `metadata` are the parsed JSON that
 * is stored (so the hash can be recomputed from the row alone); `values` lists the channel
 * values this checkpoint wrote, as `[channel, value digest hex]`, in stored order. Values
 * carried over from the parent are not listed: they are covered by the ancestor that wrote
 * them, and `verifyThread` checks that each carried reference matches the parent's.
 */
export interface CheckpointContent {
  threadId: string;
  checkpointNs: string;
  checkpointId: string;
  parentCheckpointId: string | null;
  checkpoint: unknown;
  metadata: unknown;
  values: ReadonlyArray<readonly [channel: string, digestHex: string]>;
}

/** What a pending-write row's hash covers. */
export interface WriteContent {
  threadId: string;
  checkpointNs: string;
  checkpointId: string;
  taskId: string;
  taskPath: string;
  idx: number;
  channel: string;
  type: string;
  valueDigest: string;
}

/** SHA-256 of the RFC 8785 canonical JSON of a checkpoint's content, as raw bytes. */
export function checkpointContentDigest(content: CheckpointContent): Buffer {
  return hash('sha256', canonicalJson(content), 'buffer');
}

/**
 * A checkpoint's chain hash: SHA-256 of its parent's chain hash (nothing for a root) followed
 * by its content digest. The put statement computes the same thing in SQL
 * (`sha256(coalesce(parent.hash, '') || digest)`), so no round trip is needed to learn the
 * parent's hash.
 */
export function chainHash(parentHash: Uint8Array | null, contentDigest: Uint8Array): Buffer {
  return hash(
    'sha256',
    parentHash ? Buffer.concat([parentHash, contentDigest]) : contentDigest,
    'buffer',
  );
}

/** SHA-256 of the canonical JSON of a pending write (the value by its digest), raw bytes. */
export function writeHash(content: WriteContent): Buffer {
  return hash('sha256', canonicalJson(content), 'buffer');
}

/**
 * The digest a serialised value is stored and referenced under: SHA-256 over the serde type,
 * a zero byte and the serialised bytes (so equal bytes of different types differ).
 */
export function valueDigest(type: string, bytes: Uint8Array): Buffer {
  return hash('sha256', Buffer.concat([Buffer.from(`${type}\u0000`), bytes]), 'buffer');
}

/** SHA-256 of a list element's UTF-8 bytes: the key it is stored under. */
export function elementDigest(bytes: Uint8Array): Buffer {
  return hash('sha256', bytes, 'buffer');
}
