import { randomInt } from 'node:crypto';

/** One searchable string: found when a window of `length` code units hashes to `tag` and `confirm` agrees. */
export interface MatchTarget {
  name: string;
  length: number;
  /** {@link windowTag} of the string under the matcher's base. */
  tag: number;
  /** Exact check of a candidate window (string comparison, or an HMAC for stored fingerprints). */
  confirm(window: string): boolean;
}

/** A stretch of text that holds the named secret. */
export interface SecretSpan {
  start: number;
  end: number;
  name: string;
}

/** Murmur3's finaliser: mixes a 32-bit hash so that a few stored bits say little about it. */
function mix(value: number): number {
  let hash = value ^ (value >>> 16);
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  return (hash ^ (hash >>> 16)) >>> 0;
}

/** Bits of the mixed rolling hash a target is filed under (and that a stored fingerprint keeps). */
export const TAG_BITS = 20;
const TAG_MASK = (1 << TAG_BITS) - 1;

/** A random odd 32-bit base for {@link RollingMatcher}. */
export function randomBase(): number {
  return (randomInt(0, 2 ** 31) * 2 + 1) >>> 0;
}

/** The tag of `text` under `base`: 20 bits of the mixed polynomial hash of its code units. */
export function windowTag(text: string, base: number): number {
  let hash = 0;
  for (let index = 0; index < text.length; index++) {
    hash = (Math.imul(hash, base) + text.charCodeAt(index)) | 0;
  }
  return mix(hash) & TAG_MASK;
}

interface LengthGroup {
  length: number;
  /** base^length mod 2^32 */
  power: number;
  bitmap: Uint32Array;
  targets: Map<number, MatchTarget[]>;
}

/**
 * Finds many fixed strings in linear time: a Rabin–Karp rolling hash (polynomial mod 2^32
 * with a random secret base, so text cannot be crafted to collide) computed once per position,
 * then one table probe per distinct target length; only a window whose mixed hash matches a
 * target's 20-bit tag is checked exactly. Overlapping candidates of one length are confirmed
 * once (a window starting inside the last match of that length is skipped), so confirmation
 * reads each character a bounded number of times.
 */
export class RollingMatcher {
  readonly base: number;
  readonly #groups = new Map<number, LengthGroup>();

  constructor(base: number = randomBase()) {
    this.base = base >>> 0;
  }

  get size(): number {
    let count = 0;
    for (const group of this.#groups.values()) {
      for (const list of group.targets.values()) count += list.length;
    }
    return count;
  }

  add(target: MatchTarget): void {
    let group = this.#groups.get(target.length);
    if (!group) {
      let power = 1;
      for (let step = 0; step < target.length; step++) power = Math.imul(power, this.base);
      group = { length: target.length, power, bitmap: new Uint32Array(2048), targets: new Map() };
      this.#groups.set(target.length, group);
    }
    const slot = target.tag & 0xffff;
    group.bitmap[slot >>> 5]! |= 1 << (slot & 31);
    const list = group.targets.get(target.tag);
    if (list) list.push(target);
    else group.targets.set(target.tag, [target]);
  }

  /** Every occurrence of a target in `text`: per target length, in order of position. */
  find(text: string, spans: SecretSpan[] = []): SecretSpan[] {
    // One pass per target length, each rolling its own window hash: the loop keeps its few
    // constants in registers, which is what the cost of a text without secrets comes down to.
    for (const group of this.#groups.values()) this.#findLength(group, text, spans);
    return spans;
  }

  #findLength(group: LengthGroup, text: string, spans: SecretSpan[]): void {
    const { length, power, bitmap, targets } = group;
    if (length > text.length) return;
    const base = this.base;
    let hash = 0;
    for (let index = 0; index < length - 1; index++) {
      hash = (Math.imul(hash, base) + text.charCodeAt(index)) | 0;
    }
    let lastEnd = 0;
    for (let end = length; end <= text.length; end++) {
      hash = (Math.imul(hash, base) + text.charCodeAt(end - 1)) | 0;
      if (end > length) hash = (hash - Math.imul(text.charCodeAt(end - length - 1), power)) | 0;
      let mixed = hash ^ (hash >>> 16); // mix(), inlined
      mixed = Math.imul(mixed, 0x85ebca6b);
      mixed ^= mixed >>> 13;
      mixed = Math.imul(mixed, 0xc2b2ae35);
      mixed ^= mixed >>> 16;
      if ((bitmap[(mixed & 0xffff) >>> 5]! & (1 << (mixed & 31))) === 0) continue;
      const start = end - length;
      if (start < lastEnd) continue;
      const candidates = targets.get(mixed & TAG_MASK);
      if (!candidates) continue;
      const window = text.slice(start, end);
      for (const target of candidates) {
        if (target.confirm(window)) {
          spans.push({ start, end, name: target.name });
          lastEnd = end;
          break;
        }
      }
    }
  }
}

/**
 * Finds the registered values of this process (whose text it knows) in linear time: one
 * rolling hash over a fixed window — the first `window` characters of every value, the
 * shortest value's length or 16 — probed once per position; a hit is compared in full.
 * A candidate starting inside the last match is skipped, so comparisons read each character
 * a bounded number of times.
 */
export class PrefixMatcher {
  readonly #base = randomBase();
  readonly #values: Array<{ name: string; text: string }> = [];
  #window = 0;
  #power = 1;
  #bitmap = new Uint32Array(2048);
  #byHash = new Map<number, Array<{ name: string; text: string }>>();

  get size(): number {
    return this.#values.length;
  }

  add(name: string, text: string): void {
    this.#values.push({ name, text });
    const window = Math.min(16, ...this.#values.map((value) => value.text.length));
    if (window !== this.#window) this.#rebuild(window);
    else this.#index({ name, text });
  }

  #rebuild(window: number): void {
    this.#window = window;
    this.#power = 1;
    for (let step = 0; step < window; step++) this.#power = Math.imul(this.#power, this.#base);
    this.#bitmap = new Uint32Array(2048);
    this.#byHash = new Map();
    for (const value of this.#values) this.#index(value);
  }

  #index(value: { name: string; text: string }): void {
    let hash = 0;
    for (let index = 0; index < this.#window; index++) {
      hash = (Math.imul(hash, this.#base) + value.text.charCodeAt(index)) | 0;
    }
    const slot = hash & 0xffff;
    this.#bitmap[slot >>> 5]! |= 1 << (slot & 31);
    const list = this.#byHash.get(hash);
    if (list) list.push(value);
    else this.#byHash.set(hash, [value]);
  }

  /** Every occurrence of a value in `text`. */
  find(text: string, spans: SecretSpan[] = []): SecretSpan[] {
    const window = this.#window;
    if (this.#values.length === 0 || text.length < window) return spans;
    const base = this.#base;
    const power = this.#power;
    const bitmap = this.#bitmap;
    let hash = 0;
    let lastEnd = 0;
    for (let index = 0; index < text.length; index++) {
      hash = (Math.imul(hash, base) + text.charCodeAt(index)) | 0;
      if (index >= window) hash = (hash - Math.imul(text.charCodeAt(index - window), power)) | 0;
      else if (index < window - 1) continue;
      const slot = hash & 0xffff;
      if ((bitmap[slot >>> 5]! & (1 << (slot & 31))) === 0) continue;
      const start = index - window + 1;
      if (start < lastEnd) continue;
      const candidates = this.#byHash.get(hash);
      if (!candidates) continue;
      for (const { name, text: value } of candidates) {
        if (text.startsWith(value, start)) {
          spans.push({ start, end: start + value.length, name });
          lastEnd = start + value.length;
          break;
        }
      }
    }
    return spans;
  }
}
