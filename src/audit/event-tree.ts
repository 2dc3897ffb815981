import { hash } from 'node:crypto';
import { isHashHex, MerkleTree } from './merkle-tree.js';
import type { TraceEvent } from './trace-event.js';

// Leaf input: the 32 bytes of the event's chain hash after RFC 9162's 0x00 leaf prefix.
const leaf = Buffer.alloc(33);

/**
 * The leaf hash of an event in its thread's Merkle tree: SHA-256(0x00 || the 32 bytes of the
 * event's chain hash). The chain hash covers every field of the event (canonical JSON, its
 * predecessor's hash included), so a leaf commits to the whole event.
 * @throws TypeError when `event.hash` is not 64 lower-case hex digits.
 */
export function eventLeafHash(event: Pick<TraceEvent, 'hash'>): string {
  if (!isHashHex(event.hash)) throw new TypeError('An event hash must be 64 hex digits.');
  leaf.write(event.hash, 1, 32, 'hex');
  return hash('sha256', leaf, 'hex');
}

/**
 * The Merkle tree over a thread's events, in chain order: leaf i is event i.
 * @throws TypeError when an event carries no well-formed hash.
 */
export function eventTree(events: readonly Pick<TraceEvent, 'hash'>[]): MerkleTree {
  return new MerkleTree(events.map(eventLeafHash));
}
