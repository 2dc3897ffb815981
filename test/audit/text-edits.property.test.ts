import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TextEdits } from '../../src/audit/text-edits.js';

// The obvious way: stable sort by position, skip an edit starting inside the last one applied,
// join slices.
function naiveApply(text: string, edits: ReadonlyArray<[number, number, string]>): string {
  const sorted = edits.map((edit, order) => ({ edit, order }));
  sorted.sort((a, b) => a.edit[0] - b.edit[0] || a.order - b.order);
  let result = '';
  let written = 0;
  for (const {
    edit: [at, length, replacement],
  } of sorted) {
    if (at < written) continue;
    result += text.slice(written, at) + replacement;
    written = at + length;
  }
  return result + text.slice(written);
}

const unit = fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code));

describe('TextEdits (property)', () => {
  it('applies edits in any order as a naive splice does, code unit for code unit', () => {
    fc.assert(
      fc.property(
        fc.string({ unit, maxLength: 200 }),
        fc.array(
          fc.tuple(
            fc.nat(),
            fc.nat({ max: 6 }),
            fc.constantFrom('', '&lt;', '(', '[REDACTED:x]', '\ud800'),
          ),
          { maxLength: 300 },
        ),
        (text, raw) => {
          const edits = raw.map(
            ([at, length, replacement]) =>
              [
                at % (text.length + 1),
                Math.min(length, text.length - (at % (text.length + 1))),
                replacement,
              ] as [number, number, string],
          );
          const applied = new TextEdits();
          for (const [at, length, replacement] of edits) applied.add(at, length, replacement);
          expect(applied.size).toBe(edits.length);
          expect(applied.apply(text)).toBe(naiveApply(text, edits));
        },
      ),
      { numRuns: 1000 },
    );
  });
});
