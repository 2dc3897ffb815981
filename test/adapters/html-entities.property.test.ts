import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeHtmlEntities, decodeHtmlEntitiesDeep } from '../../src/adapters/html-entities.js';

const NAMED: Record<string, string> = { '<': 'lt', '>': 'gt', '&': 'amp', '"': 'quot', '/': 'sol' };

/** One code point written as a character reference, chosen by `pick` (never bare when `&`). */
function encode(char: string, pick: number): string {
  const codePoint = char.codePointAt(0)!;
  const choice = pick % 5;
  if (choice === 0 && char !== '&') return char;
  if (choice === 1 && NAMED[char])
    return `&${pick % 2 === 0 ? NAMED[char] : NAMED[char]!.toUpperCase()};`;
  if (codePoint === 0) return char === '&' ? '&amp;' : char; // &#0; is U+FFFD, as in HTML
  const zeros = '0'.repeat(pick % 4);
  if (choice === 2) return `&#${zeros}${codePoint};`;
  const hex = codePoint.toString(16);
  return `&#${pick % 2 === 0 ? 'x' : 'X'}${zeros}${pick % 3 === 0 ? hex.toUpperCase() : hex};`;
}

const encoded = fc
  .tuple(fc.string({ unit: 'binary', maxLength: 60 }), fc.array(fc.nat(), { minLength: 1 }))
  .map(([text, picks]) => ({
    text,
    encoded: [...text].map((char, index) => encode(char, picks[index % picks.length]!)).join(''),
  }));

describe('decodeHtmlEntities', () => {
  it('decodes any text written with decimal, hexadecimal and named references (property)', () => {
    fc.assert(
      fc.property(encoded, ({ text, encoded }) => {
        expect(decodeHtmlEntities(encoded)).toBe(text);
      }),
      { numRuns: 500 },
    );
  });

  it('leaves text without an ampersand as it is, and never lengthens any text (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), (text) => {
        const plain = text.replaceAll('&', '');
        expect(decodeHtmlEntities(plain)).toBe(plain);
        expect(decodeHtmlEntities(text).length).toBeLessThanOrEqual(text.length);
        expect(decodeHtmlEntitiesDeep(text).length).toBeLessThanOrEqual(text.length);
      }),
      { numRuns: 500 },
    );
  });

  it('decodes what browsers decode without a semicolon, and escaped escapes when deep', () => {
    expect(decodeHtmlEntities('&ltIMPORTANT&gt')).toBe('<IMPORTANT>');
    expect(decodeHtmlEntities('&#60IMPORTANT&#x3e')).toBe('<IMPORTANT>');
    expect(decodeHtmlEntities('&#0000000000000060;')).toBe('<');
    expect(decodeHtmlEntities('&#99999999999999999999999;&#xD800;&#0;')).toBe('\ufffd'.repeat(3));
    expect(decodeHtmlEntities('&amp;lt;')).toBe('&lt;');
    expect(decodeHtmlEntitiesDeep('&amp;amp;lt;IMPORTANT&amp;gt;')).toBe('<IMPORTANT>');
    expect(decodeHtmlEntities('AT&T &unknown; & &# &#x; &;')).toBe('AT&T &unknown; & &# &#x; &;');
  });

  it('runs in time linear in the input on adversarial repetitions (property)', () => {
    const pieces = [
      '&',
      '#',
      'x',
      '0',
      '9',
      ';',
      'amp',
      'lt',
      'a',
      '&amp;',
      '&#',
      'abcdefghijklmnop',
    ];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { minLength: 1, maxLength: 10 }), (unit) => {
        const text = unit.join('').repeat(Math.ceil(500_000 / unit.join('').length));
        const started = performance.now();
        decodeHtmlEntitiesDeep(text);
        // Quadratic work on half a million characters takes minutes; linear is milliseconds.
        expect(performance.now() - started).toBeLessThan(1_500);
      }),
      { numRuns: 20 },
    );
  });
});
