import { describe, expect, it } from 'vitest';
import { Decay } from '../../src/memory/index.js';

const DAY = 86_400_000;
const start = new Date('2026-01-01T00:00:00.000Z');
const daysLater = (days: number) => new Date(start.getTime() + days * DAY);

describe('Decay', () => {
  it('halves the weight of an episodic record every half-life', () => {
    const decay = new Decay({ halfLifeMs: 2 * DAY });
    expect(decay.factor('episodic', 1, start, start)).toBe(1);
    expect(decay.factor('episodic', 1, start, daysLater(2))).toBeCloseTo(0.5, 12);
    expect(decay.factor('episodic', 1, start, daysLater(6))).toBeCloseTo(0.125, 12);
  });

  it('leaves tiers that do not decay at their strength', () => {
    const decay = new Decay({ halfLifeMs: DAY });
    expect(decay.factor('semantic', 1, start, daysLater(30))).toBe(1);
    expect(
      new Decay({ tiers: ['semantic'] }).factor('semantic', 1, start, daysLater(7)),
    ).toBeCloseTo(0.5, 12);
  });

  it('reinforces to the decayed strength plus the reinforcement, capped', () => {
    const decay = new Decay({ halfLifeMs: DAY, reinforcement: 1, maxStrength: 1.8 });
    expect(decay.reinforced('episodic', 1, start, daysLater(1))).toBeCloseTo(1.5, 12);
    expect(decay.reinforced('episodic', 1.5, start, start)).toBe(1.8);
  });

  it('rejects a non-positive half-life with config_invalid', () => {
    expect(() => new Decay({ halfLifeMs: 0 })).toThrow(
      expect.objectContaining({ code: 'config_invalid' }),
    );
  });
});
