import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PrefixMatcher, RollingMatcher, windowTag } from '../../src/audit/rolling-matcher.js';

// Every occurrence of `needle` in `text` that does not start inside an earlier one: what the
// matchers promise to report, by a search nobody could get wrong.
function naiveOccurrences(text: string, needle: string): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  let lastEnd = 0;
  for (let start = 0; start + needle.length <= text.length; start++) {
    if (start >= lastEnd && text.startsWith(needle, start)) {
      found.push([start, start + needle.length]);
      lastEnd = start + needle.length;
    }
  }
  return found;
}

// Small alphabets make repeats, overlaps and near misses common.
const alphabet = fc.constantFrom('a', 'b', '%', '\u00e9', '\ud800', '/');
const text = fc.array(alphabet, { maxLength: 300 }).map((chars) => chars.join(''));
const needle = fc.array(alphabet, { minLength: 4, maxLength: 40 }).map((chars) => chars.join(''));

describe('secret matchers (property)', () => {
  it('RollingMatcher finds exactly the occurrences of each target a naive search finds', () => {
    fc.assert(
      fc.property(
        text,
        fc.array(needle, { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 2 ** 31 }),
        (haystack, needles, seed) => {
          const matcher = new RollingMatcher((seed * 2 + 1) >>> 0);
          const distinct = [...new Set(needles)];
          for (const [index, value] of distinct.entries()) {
            matcher.add({
              name: `n${index}`,
              length: value.length,
              tag: windowTag(value, matcher.base),
              confirm: (window) => window === value,
            });
          }
          const planted = haystack.slice(0, 150) + distinct.join('') + haystack.slice(150);
          const spans = matcher.find(planted);
          for (const span of spans) {
            const value = distinct[Number(span.name.slice(1))]!;
            expect(planted.slice(span.start, span.end)).toBe(value);
          }
          // Targets of one length share a group: a second target is reported where no target
          // of its length was found overlapping first, which the naive search of a single
          // target gives when the lengths differ.
          const lengths = new Map<number, number>();
          for (const value of distinct)
            lengths.set(value.length, (lengths.get(value.length) ?? 0) + 1);
          distinct.forEach((value, index) => {
            if (lengths.get(value.length) !== 1) return;
            const found = spans
              .filter((span) => span.name === `n${index}`)
              .map((span) => [span.start, span.end]);
            expect(found).toEqual(naiveOccurrences(planted, value));
          });
        },
      ),
      { numRuns: 500 },
    );
  });

  it('PrefixMatcher finds exactly the occurrences of a value a naive search finds', () => {
    fc.assert(
      fc.property(text, needle, (haystack, value) => {
        const matcher = new PrefixMatcher();
        matcher.add('SECRET', value);
        const planted = haystack.slice(0, 150) + value + haystack.slice(150);
        const found = matcher.find(planted).map((span) => [span.start, span.end]);
        expect(found).toEqual(naiveOccurrences(planted, value));
      }),
      { numRuns: 500 },
    );
  });
});
