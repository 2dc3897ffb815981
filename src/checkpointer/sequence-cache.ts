import { hash } from 'node:crypto';

/** What this process last stored for one list-valued channel of one thread. */
export interface KnownSequence {
  /** The sequence the list's elements were appended to (a bigint, as a decimal string). */
  readonly sequenceId: string;
  /** How many elements the stored list had. */
  readonly length: number;
  /** Byte offset of the stored list's closing `]`: its elements end here. */
  readonly prefixBytes: number;
  /** SHA-256 of the stored list's bytes before `prefixBytes`. */
  readonly prefixDigest: string;
}

/**
 * Remembers, per thread, namespace and channel, the last list this process appended to a
 * sequence, so that the next version of a growing list (a `messages` channel) only sends
 * and stores its new elements. Bounded (least recently used entries go first).
 *
 * The cache is only a hint: the put statement checks that the sequence prefix still exists
 * and fails otherwise, and the checkpointer then forgets the entry and writes a fresh
 * sequence. So another process appending, or `prune()` removing old items, is safe.
 */
export class SequenceCache {
  readonly #entries = new Map<string, KnownSequence>();
  readonly #capacity: number;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  /** The stored list `bytes` extends, if any: same bytes up to the old closing bracket. */
  match(key: string, bytes: Uint8Array): KnownSequence | undefined {
    const known = this.#entries.get(key);
    if (!known) return undefined;
    // The new list must be the old one (closing bracket at the same place) or the old one
    // followed by a comma and more elements.
    const next = bytes[known.prefixBytes];
    const sameEnd = known.prefixBytes === bytes.length - 1;
    if (next !== 0x2c && !sameEnd) return undefined;
    if (prefixDigest(bytes, known.prefixBytes) !== known.prefixDigest) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, known);
    return known;
  }

  /** Records the list just stored (call only after the statement committed). */
  remember(key: string, known: KnownSequence): void {
    this.#entries.delete(key);
    this.#entries.set(key, known);
    if (this.#entries.size > this.#capacity) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
  }

  /** Forgets a channel's entry (after a conflict) or, with a thread prefix, a whole thread. */
  forget(key: string): void {
    this.#entries.delete(key);
  }

  /** Forgets every entry of `threadId` (after deleteThread or prune). */
  forgetThread(threadId: string): void {
    const prefix = `${threadId}\u0000`;
    for (const key of this.#entries.keys()) if (key.startsWith(prefix)) this.#entries.delete(key);
  }
}

/** The cache key of one channel of one namespace of one thread. */
export function sequenceKey(threadId: string, checkpointNs: string, channel: string): string {
  return `${threadId}\u0000${checkpointNs}\u0000${channel}`;
}

/** SHA-256 hex of `bytes[0, length)`. */
export function prefixDigest(bytes: Uint8Array, length: number): string {
  return hash('sha256', bytes.subarray(0, length), 'hex');
}
