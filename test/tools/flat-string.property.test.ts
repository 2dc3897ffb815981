import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { flatString } from '../../src/tools/flat-string.js';

describe('flatString (property)', () => {
  it('keeps every UTF-16 code unit, lone surrogates included, for ropes and slices', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', minLength: 70, maxLength: 100 }),
        fc.string({
          unit: fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)),
          maxLength: 64,
        }),
        fc.integer({ min: 500, max: 900 }),
        (left, right, repeats) => {
          // Long enough to be copied; built by appending (a rope) and then cut (a slice).
          let rope = '';
          for (let index = 0; index < repeats; index++) rope += index % 2 ? left : right;
          const slice = `x${rope}y`.slice(1, -1);
          for (const text of [rope, slice]) {
            const copy = flatString(text);
            expect(copy.length).toBe(text.length);
            expect(copy === text).toBe(true);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
