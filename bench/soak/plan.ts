import { SANCTIONED } from './graph.js';

/** What the approvers will do with a thread's transfer. */
export type Fate = 'approve' | 'race' | 'dual' | 'reject' | 'expire' | 'late' | 'sanctioned';

// Shares of each fate. `late` is decided just after the deadline by the approver whose clock
// is skewed; `race` is approved by both approver processes at once.
const FATES: ReadonlyArray<[Fate, number]> = [
  ['approve', 0.47],
  ['race', 0.05],
  ['dual', 0.15],
  ['reject', 0.12],
  ['expire', 0.08],
  ['late', 0.09],
  ['sanctioned', 0.04],
];

/** A seeded generator (mulberry32): the same seed draws the same run. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One thread to start: id, fate, and the transfer the scripted model will propose. */
export interface PlannedThread {
  id: string;
  seq: number;
  fate: Fate;
  amount: string;
  to_address: string;
}

function amountBetween(random: () => number, fromCents: number, toCents: number): string {
  const cents = fromCents + Math.floor(random() * (toCents - fromCents));
  return `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;
}

/** Draws thread number `seq` of run `runId`. */
export function planThread(runId: string, seq: number, random: () => number): PlannedThread {
  let draw = random();
  let fate: Fate = 'approve';
  for (const [candidate, share] of FATES) {
    if (draw < share) {
      fate = candidate;
      break;
    }
    draw -= share;
  }
  const address = `0x${Array.from({ length: 40 }, () => Math.floor(random() * 16).toString(16)).join('')}`;
  return {
    id: `t-${runId}-${seq}`,
    seq,
    fate,
    // At or above 10,000.00 USD the kit requires two approvers.
    amount:
      fate === 'dual'
        ? amountBetween(random, 1_000_000, 5_000_000)
        : amountBetween(random, 1_000, 999_999),
    to_address: fate === 'sanctioned' ? SANCTIONED : address,
  };
}
