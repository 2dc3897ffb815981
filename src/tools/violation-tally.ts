import type { SandboxViolation } from '../sandbox/sandbox.js';

/** One distinct refused side effect of a call, with how many times it was refused. */
export interface TalliedViolation extends SandboxViolation {
  count: number;
}

/** What a call's `security_event` says about the side effects its sandbox refused. */
export interface ViolationSummary {
  /**
   * Every distinct (capability, target) up to the limit: first what the sandbox itself observed
   * in this process (the egress proxy, the jail sweep, the parent's fs channel), then what the
   * tool's own process claims (`reportedBy: 'child'`), each in the order first reported.
   */
  violations: TalliedViolation[];
  /** Every violation reported, counted or dropped. */
  total: number;
  /**
   * Violations beyond the limit, not listed: how many distinct ones (counted up to 4,096, a
   * lower bound beyond) and how many times they were reported.
   */
  dropped?: { distinct: number; count: number };
}

/** Longest target or reason kept, in characters (a child's claims are the child's to size). */
const MAX_TEXT = 300;
/** Distinct dropped entries told apart (by a 32-bit hash of each): beyond, a lower bound. */
const MAX_DROPPED_DISTINCT = 4096;

/**
 * A bounded record of one call's refused side effects. Each distinct (capability, target) is
 * kept once with a count, so no number of repeats pushes another one out; the distinct entries
 * are capped, apart for what the sandbox observed and for what the tool's process claims, so a
 * child that claims a flood of violations cannot crowd out the sandbox's own reports. Beyond a
 * cap an entry is dropped, and counted as dropped.
 */
export class ViolationTally {
  readonly #observed = new Map<string, TalliedViolation>();
  readonly #claimed = new Map<string, TalliedViolation>();
  readonly #limit: number;
  #total = 0;
  readonly #droppedKeys = new Set<number>();
  #droppedCount = 0;

  /** @param limit distinct entries kept from each source (the sandbox's, the child's); default 64. */
  constructor(limit = 64) {
    this.#limit = limit;
  }

  /** Every violation reported so far. */
  get total(): number {
    return this.#total;
  }

  /** Records one refused side effect. */
  add(violation: SandboxViolation): void {
    this.#total++;
    const claimed = violation.reportedBy === 'child';
    const entries = claimed ? this.#claimed : this.#observed;
    const target = clip(violation.target);
    const key = `${violation.capability}\0${target}`;
    const known = entries.get(key);
    if (known) {
      known.count++;
      return;
    }
    if (entries.size >= this.#limit) {
      if (this.#droppedKeys.size < MAX_DROPPED_DISTINCT) {
        this.#droppedKeys.add(fnv1a(`${claimed ? 'child' : 'sandbox'}\0${key}`));
      }
      this.#droppedCount++;
      return;
    }
    entries.set(key, {
      capability: violation.capability,
      target,
      reason: clip(violation.reason),
      ...(claimed ? { reportedBy: 'child' as const } : {}),
      count: 1,
    });
  }

  /** The record for the call's `security_event`. */
  summary(): ViolationSummary {
    return {
      violations: [...this.#observed.values(), ...this.#claimed.values()].map((entry) => ({
        ...entry,
      })),
      total: this.#total,
      ...(this.#droppedCount > 0
        ? { dropped: { distinct: this.#droppedKeys.size, count: this.#droppedCount } }
        : {}),
    };
  }
}

function clip(text: string): string {
  const value = String(text);
  return value.length > MAX_TEXT ? `${value.slice(0, MAX_TEXT - 1)}…` : value;
}

/** 32-bit FNV-1a: tells dropped entries apart without keeping their text. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}
