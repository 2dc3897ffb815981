import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { credentialKindsIn } from '../../src/memory/index.js';

const OPENAI = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123';
const GITHUB = `ghp_${'A1b2C3d4E5'.repeat(4)}`;

/** Ordinary fields that end in a letter, so no separator-free view gives a token a boundary. */
const filler = fc.stringMatching(/^[a-z]{1,12}$/);

describe('credentialKindsIn', () => {
  it('finds a token split across consecutive fields at any position, also past the 32nd (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 150 }),
        fc.array(filler, { minLength: 1, maxLength: 8 }),
        fc.constantFrom(OPENAI, GITHUB),
        fc.uniqueArray(fc.integer({ min: 1, max: 30 }), { minLength: 1, maxLength: 4 }),
        fc.array(filler, { maxLength: 10 }),
        (count, words, token, cutAt, after) => {
          // The count is drawn uniformly: arrays fast-check draws are mostly short, past 32 rarely.
          const before = Array.from({ length: count }, (_, index) => words[index % words.length]!);
          // Cut the token into non-empty parts at the drawn positions (every token is longer than 30).
          const points = [0, ...cutAt.sort((a, b) => a - b), token.length];
          const parts = points.slice(1).map((end, index) => token.slice(points[index], end));
          const kinds = credentialKindsIn([...before, ...parts, ...after]);
          expect(kinds.length, `${before.length} fields before, ${parts}`).toBeGreaterThan(0);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('passes many ordinary fields untouched', () => {
    const fields = Array.from({ length: 2_000 }, (_, index) => `k${index}z`);
    expect(credentialKindsIn(fields)).toEqual([]);
  });
});
