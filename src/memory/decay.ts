import { VeridexError } from '../errors/index.js';
import type { StoredTier } from './types.js';

/** Options for {@link Decay}. */
export interface DecayOptions {
  /** Time for a record's retrieval weight to halve. Default 7 days. */
  halfLifeMs?: number;
  /** Tiers that decay. Default `['episodic']`: facts and procedures stay until invalidated. */
  tiers?: readonly StoredTier[];
  /** Strength added when a record is recalled. Default 1 (as strong as a fresh record). */
  reinforcement?: number;
  /** Cap on strength, so a much-recalled record cannot dominate forever. Default 5. */
  maxStrength?: number;
}

const DAY_MS = 86_400_000;

/**
 * Retrieval decay S0·e^(−λt) with λ = ln 2 / half-life: t is the time since the record was
 * observed or last reinforced, S0 its strength. Decay only ranks records down; nothing is
 * deleted. Recalling a record reinforces it: S0 becomes the decayed value plus
 * `reinforcement` (capped), and t restarts.
 *
 * @throws VeridexError `config_invalid` for a non-positive half-life or reinforcement < 0.
 * @example new Decay({ halfLifeMs: 3 * 86_400_000 }).factor('episodic', 1, observedAt, now)
 */
export class Decay {
  readonly halfLifeMs: number;
  readonly tiers: ReadonlySet<StoredTier>;
  readonly reinforcement: number;
  readonly maxStrength: number;
  readonly #lambda: number;

  constructor(options: DecayOptions = {}) {
    this.halfLifeMs = options.halfLifeMs ?? 7 * DAY_MS;
    this.reinforcement = options.reinforcement ?? 1;
    this.maxStrength = options.maxStrength ?? 5;
    if (!(this.halfLifeMs > 0) || !(this.reinforcement >= 0) || !(this.maxStrength > 0)) {
      throw new VeridexError(
        'config_invalid',
        `Decay needs halfLifeMs > 0, reinforcement ≥ 0 and maxStrength > 0; got ${this.halfLifeMs}, ${this.reinforcement}, ${this.maxStrength}.`,
      );
    }
    this.tiers = new Set(options.tiers ?? ['episodic']);
    this.#lambda = Math.LN2 / this.halfLifeMs;
  }

  /** The retrieval weight of a record now: S0·e^(−λt), or `strength` for tiers that do not decay. */
  factor(tier: StoredTier, strength: number, since: Date | string, now: Date): number {
    if (!this.tiers.has(tier)) return strength;
    const elapsed = Math.max(0, now.getTime() - new Date(since).getTime());
    return strength * Math.exp(-this.#lambda * elapsed);
  }

  /** The strength after a recall at `now`. */
  reinforced(tier: StoredTier, strength: number, since: Date | string, now: Date): number {
    return Math.min(this.maxStrength, this.factor(tier, strength, since, now) + this.reinforcement);
  }
}
