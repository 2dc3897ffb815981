import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NeedleAutomaton } from '../../src/adapters/needle-automaton.js';
import { foldForScan } from '../../src/adapters/scan-folding.js';
import { pairSentences } from '../../src/adapters/scan-needles.js';

// Every index where `needle` starts in `text`, as `indexOf` from every hit finds them.
function naiveStarts(text: string, needle: string): number[] {
  const starts: number[] = [];
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + 1)) starts.push(at);
  return starts;
}

// Needles over a small alphabet, so they overlap, nest and share prefixes and suffixes.
const needle = fc.string({
  unit: fc.constantFrom('a', 'b', 'u', 's', "'", '/', '.'),
  minLength: 1,
  maxLength: 6,
});
const text = fc.string({
  unit: fc.constantFrom('a', 'b', 'u', 's', "'", '/', '.', ' ', 'é', '\u{1d400}', 'z'),
  maxLength: 200,
});

describe('NeedleAutomaton', () => {
  it('finds every occurrence of every needle, overlapping ones included, as indexOf does (property)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(needle, { minLength: 1, maxLength: 12 }),
        text,
        (needles, haystack) => {
          const found = new NeedleAutomaton(needles).starts(haystack);
          expect(found).toEqual(needles.map((one) => naiveStarts(haystack, one)));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('reads a needle inside another and one that is a suffix of another', () => {
    const automaton = new NeedleAutomaton(['user', 'ser', 'donottell', 'tell', 'us']);
    expect(automaton.starts('do not; donottelluser')).toEqual([[17], [18], [8], [13], [17]]);
    expect(automaton.indexOf('tell')).toBe(3);
    expect(automaton.indexOf('absent')).toBe(-1);
  });

  it('refuses an empty needle and one outside printable ASCII', () => {
    expect(() => new NeedleAutomaton([''])).toThrow(RangeError);
    expect(() => new NeedleAutomaton(['ü'])).toThrow(RangeError);
  });

  it('reads a needle-dense text in one pass: 1 MB of near words in well under a second', () => {
    const automaton = new NeedleAutomaton(['user', 'donottell', 'donotnotify', 'usermustnotknow']);
    const dense = 'user '.repeat(200_000);
    const started = performance.now();
    const [users] = automaton.starts(dense);
    expect(users).toHaveLength(200_000);
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});

describe('the folding of plain ASCII', () => {
  it('is the text lower-cased without separators and controls, each unit at its index (property)', () => {
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.integer({ min: 0, max: 0x7f }).map((code) => String.fromCharCode(code)),
        }),
        (raw) => {
          const plain = raw.replace(/[%\\]/g, '');
          const folded = foldForScan(plain);
          const separator = (char: string) => ' \t\n\r\f\v_-*`'.includes(char);
          const kept = [...plain]
            .map((char, index) => [index, char] as const)
            .filter(([, char]) => !separator(char) && char.charCodeAt(0) >= 0x20);
          expect(folded.text).toBe(kept.map(([, char]) => char.toLowerCase()).join(''));
          expect([...folded.origin]).toEqual(kept.map(([index]) => index));
          // A gap where a separator (or the start) came before the unit.
          expect([...folded.gap]).toEqual(
            kept.map(([index], position) => {
              const previous = position === 0 ? -1 : kept[position - 1]![0];
              const between = plain.slice(previous + 1, index);
              return position === 0 || [...between].some(separator) ? 1 : 0;
            }),
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it('keeps a lone surrogate as it is', () => {
    expect(foldForScan('a\ud800b').text).toBe('a\ud800b');
  });
});

describe('pairSentences', () => {
  it('starts a sentence after . ! or ? before any blank, also a non-ASCII one (property)', () => {
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.constantFrom('a', '.', '!', '?', ' ', '\n', '\u00a0', '\u2003', '\t'),
        }),
        (raw) => {
          const start = pairSentences(raw);
          let from = 0;
          let lineBlank = false;
          for (let index = 0; index < raw.length; index++) {
            expect(start[index]).toBe(from);
            const char = raw[index]!;
            if (char === '\n') {
              if (lineBlank) from = index + 1;
              lineBlank = true;
            } else if (char !== ' ' && char !== '\t' && char !== '\r') {
              lineBlank = false;
              const next = raw[index + 1];
              if ('.!?'.includes(char) && (next === undefined || /\s/.test(next))) from = index + 1;
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
