/**
 * The Merkle tree of RFC 9162 §2.1 (Certificate Transparency v2, unchanged from RFC 6962):
 * SHA-256, leaves hashed as SHA-256(0x00 || leaf), interior nodes as SHA-256(0x01 || left ||
 * right), a tree of n leaves split at the largest power of two below n. The domain-separation
 * bytes keep a leaf from ever being passed off as an interior node (second-preimage attack).
 * Hashes travel as lower-case hex, like every other hash of the library.
 */
import { hash } from 'node:crypto';

/** MTH({}): the root of the empty tree, SHA-256 of no bytes. */
export const EMPTY_ROOT = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

const HEX_HASH = /^[0-9a-f]{64}$/;

/** True for a SHA-256 hash written as 64 lower-case hex digits — the only form proofs accept. */
export function isHashHex(value: unknown): value is string {
  return typeof value === 'string' && value.length === 64 && HEX_HASH.test(value);
}

/** SHA-256(0x00 || data): the hash of one leaf. */
export function leafHash(data: Uint8Array): string {
  const input = new Uint8Array(data.length + 1);
  input.set(data, 1);
  return hash('sha256', input, 'hex');
}

// One scratch buffer for interior nodes: about twice as fast as concatenating, which matters
// when a verifier rebuilds the tree of ten thousand events.
const node = Buffer.alloc(65);
node[0] = 1;

/** SHA-256(0x01 || left || right) of two hex hashes (not checked: callers pass well-formed hashes). */
export function nodeHash(left: string, right: string): string {
  node.write(left, 1, 32, 'hex');
  node.write(right, 33, 32, 'hex');
  return hash('sha256', node, 'hex');
}

/** The largest power of two smaller than `n` (n ≥ 2): where RFC 9162 splits a tree. */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/**
 * A Merkle tree over leaf hashes, holding every complete (power-of-two, aligned) subtree so
 * that the root of any prefix, an inclusion proof or a consistency proof costs O(log² n) hashes
 * once the tree is built (about 2n hashes). Immutable once built.
 *
 * @example
 * const tree = new MerkleTree(events.map((event) => eventLeafHash(event)));
 * tree.root();                       // MTH of all leaves
 * tree.inclusionProof(3);            // PATH(3, D[n])
 * tree.consistencyProof(5);          // PROOF(5, D[n])
 */
export class MerkleTree {
  /** levels[h][i] = the hash of leaves [i·2^h, (i+1)·2^h). */
  readonly #levels: string[][];

  /** @throws TypeError when a leaf hash is not 64 lower-case hex digits. */
  constructor(leafHashes: readonly string[]) {
    for (const leaf of leafHashes) {
      if (!isHashHex(leaf)) throw new TypeError('MerkleTree: leaf hashes must be 64 hex digits.');
    }
    const levels: string[][] = [[...leafHashes]];
    for (let below = levels[0]!; below.length >= 2; ) {
      const level: string[] = new Array(below.length >> 1);
      for (let index = 0; index < level.length; index++) {
        level[index] = nodeHash(below[2 * index]!, below[2 * index + 1]!);
      }
      levels.push(level);
      below = level;
    }
    this.#levels = levels;
  }

  /** Number of leaves. */
  get size(): number {
    return this.#levels[0]!.length;
  }

  /** The hash of leaf `index`. */
  leaf(index: number): string {
    this.#checkIndex(index, this.size);
    return this.#levels[0]![index]!;
  }

  /** MTH(D[0:size]): the root of the first `size` leaves (default all). */
  root(size: number = this.size): string {
    this.#checkSize(size);
    return size === 0 ? EMPTY_ROOT : this.#subtree(0, size);
  }

  /**
   * PATH(index, D[0:size]) of RFC 9162 §2.1.3.1: the sibling hashes from the leaf up to the root
   * of the first `size` leaves.
   * @throws RangeError unless 0 ≤ index < size ≤ the tree's size.
   */
  inclusionProof(index: number, size: number = this.size): string[] {
    this.#checkSize(size);
    this.#checkIndex(index, size);
    const proof: string[] = [];
    this.#path(index, 0, size, proof);
    return proof;
  }

  /**
   * PROOF(first, D[0:size]) of RFC 9162 §2.1.4.1: the hashes that prove the tree of `first`
   * leaves is a prefix of the tree of `size` leaves. Empty when first is 0 or equals size.
   * @throws RangeError unless 0 ≤ first ≤ size ≤ the tree's size.
   */
  consistencyProof(first: number, size: number = this.size): string[] {
    this.#checkSize(size);
    if (!Number.isSafeInteger(first) || first < 0 || first > size) {
      throw new RangeError(`MerkleTree: no consistency proof from ${first} to ${size} leaves.`);
    }
    const proof: string[] = [];
    if (first > 0 && first < size) this.#subproof(first, 0, size, true, proof);
    return proof;
  }

  // MTH(D[start:end]). In RFC 9162's recursion every left part is a complete, aligned subtree
  // (stored); only the right edge needs hashing, so this is O(log n).
  #subtree(start: number, end: number): string {
    const width = end - start;
    const height = Math.log2(width);
    if (Number.isInteger(height) && start % width === 0)
      return this.#levels[height]![start / width]!;
    const k = splitPoint(width);
    return nodeHash(this.#subtree(start, start + k), this.#subtree(start + k, end));
  }

  #path(index: number, start: number, end: number, proof: string[]): void {
    if (end - start === 1) return;
    const k = splitPoint(end - start);
    if (index < start + k) {
      this.#path(index, start, start + k, proof);
      proof.push(this.#subtree(start + k, end));
    } else {
      this.#path(index, start + k, end, proof);
      proof.push(this.#subtree(start, start + k));
    }
  }

  // SUBPROOF(m, D[start:end], b) of RFC 9162 §2.1.4.1, with m counted from `start`.
  #subproof(m: number, start: number, end: number, complete: boolean, proof: string[]): void {
    const n = end - start;
    if (m === n) {
      if (!complete) proof.push(this.#subtree(start, end));
      return;
    }
    const k = splitPoint(n);
    if (m <= k) {
      this.#subproof(m, start, start + k, complete, proof);
      proof.push(this.#subtree(start + k, end));
    } else {
      this.#subproof(m - k, start + k, end, false, proof);
      proof.push(this.#subtree(start, start + k));
    }
  }

  #checkSize(size: number): void {
    if (!Number.isSafeInteger(size) || size < 0 || size > this.size) {
      throw new RangeError(`MerkleTree: size ${size} is outside 0..${this.size}.`);
    }
  }

  #checkIndex(index: number, size: number): void {
    if (!Number.isSafeInteger(index) || index < 0 || index >= size) {
      throw new RangeError(`MerkleTree: leaf ${index} is outside a tree of ${size} leaves.`);
    }
  }
}
