/**
 * Verifiers for RFC 9162's inclusion and consistency proofs (§2.1.3.2 and §2.1.4.2), written
 * from the RFC's algorithms. They take untrusted input (proofs from a bundle, heads from a file)
 * and never throw: anything malformed is simply not a valid proof.
 */
import { EMPTY_ROOT, isHashHex, nodeHash } from './merkle-tree.js';

const isSize = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

const isPath = (value: unknown): value is string[] =>
  Array.isArray(value) && value.length <= 64 && value.every(isHashHex);

// Sizes reach 2^53, beyond the 32 bits of JavaScript's bit operators: halve arithmetically.
const half = (value: number): number => Math.floor(value / 2);
const odd = (value: number): boolean => value % 2 === 1;

/**
 * The root hash an inclusion proof leads to, or undefined when the proof cannot be one for leaf
 * `index` of a tree of `size` leaves (RFC 9162 §2.1.3.2, steps 1–5 without the final compare).
 */
export function rootFromInclusion(
  index: number,
  size: number,
  leaf: string,
  proof: readonly string[],
): string | undefined {
  if (!isSize(index) || !isSize(size) || index >= size || !isHashHex(leaf) || !isPath(proof)) {
    return undefined;
  }
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return undefined;
    if (odd(fn) || fn === sn) {
      r = nodeHash(p, r);
      while (!odd(fn) && fn !== 0) {
        fn = half(fn);
        sn = half(sn);
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 ? r : undefined;
}

/**
 * True when `proof` proves that `leaf` (a leaf hash) is leaf `index` of the tree of `size`
 * leaves whose root is `root`.
 * @example verifyInclusion(3, tree.size, tree.leaf(3), tree.inclusionProof(3), tree.root()) // true
 */
export function verifyInclusion(
  index: number,
  size: number,
  leaf: string,
  proof: readonly string[],
  root: string,
): boolean {
  return isHashHex(root) && rootFromInclusion(index, size, leaf, proof) === root;
}

/**
 * True when `proof` proves that the tree of `first` leaves with root `firstRoot` is a prefix of
 * the tree of `second` leaves with root `secondRoot`: the later log kept every earlier entry,
 * unchanged and in order (RFC 9162 §2.1.4.2). A tree is consistent with itself (same size, same
 * root, empty proof) and every tree extends the empty one (first 0, empty proof).
 * @example verifyConsistency(m, tree.size, oldRoot, tree.root(), tree.consistencyProof(m)) // true
 */
export function verifyConsistency(
  first: number,
  second: number,
  firstRoot: string,
  secondRoot: string,
  proof: readonly string[],
): boolean {
  if (!isSize(first) || !isSize(second) || first > second || !isPath(proof)) return false;
  if (!isHashHex(firstRoot) || !isHashHex(secondRoot)) return false;
  if (first === 0) return proof.length === 0 && firstRoot === EMPTY_ROOT;
  if (first === second) return proof.length === 0 && firstRoot === secondRoot;
  // Step 1: a proof between two different sizes is never empty.
  if (proof.length === 0) return false;
  // Step 2: when the old tree is a complete subtree, its root is the proof's implicit first node.
  const path = Number.isInteger(Math.log2(first)) ? [firstRoot, ...proof] : proof;
  // Steps 3–4.
  let fn = first - 1;
  let sn = second - 1;
  while (odd(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  // Step 5.
  let fr = path[0]!;
  let sr = path[0]!;
  // Step 6.
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (odd(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while (!odd(fn) && fn !== 0) {
        fn = half(fn);
        sn = half(sn);
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  // Step 7.
  return fr === firstRoot && sr === secondRoot && sn === 0;
}
