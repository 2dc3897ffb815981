import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MODEL_MARKERS, type ModelMarker, PATTERN_OF_FORM } from '../../src/tools/model-markers.js';
import { sanitizeOutput } from '../../src/tools/sanitize-output.js';

// Every row of the table, attacked the way an injected tool output would spell it: any mix of
// upper and lower case, any character in its full-width form, blanks inside the delimiters,
// brackets written as JSON escapes, and text around it. A row the scanner does not honour
// (a new family, or a broken name such as one holding "_") fails here.

const fullWidth = (char: string): string => {
  const code = char.charCodeAt(0);
  return code > 0x20 && code < 0x7f ? String.fromCharCode(code + 0xfee0) : char;
};

// Where a run of blanks may stand: after the opening delimiter and before the closing one.
function spacingSlots(marker: ModelMarker): { open: number; close: number } {
  const { example, form } = marker;
  if (form === 'header' || form === 'quoted_header') {
    return { open: 0, close: example.length - 1 }; // indentation; before the colon
  }
  const open = /^(<\||<｜|\[\/?|<<\/?|<\/?)/.exec(example)![0].length;
  const close = example.length - /(\|>|｜>|\]|>>|>)$/.exec(example)![0].length;
  return { open, close };
}

interface Variant {
  upper: boolean[];
  wide: boolean[];
  openBlank: string;
  closeBlank: string;
  escaped: boolean;
  /** Turn headers only: one blank written between every two letters of the role word. */
  letterGap: string;
}

function spell(marker: ModelMarker, variant: Variant): string {
  const { open, close } = spacingSlots(marker);
  const header = marker.form === 'header' || marker.form === 'quoted_header';
  let text = '';
  for (let index = 0; index < marker.example.length; index++) {
    if (index === open) text += variant.openBlank;
    if (index === close) text += variant.closeBlank;
    let char = marker.example[index]!;
    const nextIsLetter = /[a-z]/i.test(marker.example[index + 1] ?? '');
    if (/[a-z]/i.test(char)) char = variant.upper[index] ? char.toUpperCase() : char.toLowerCase();
    // Turn headers are read with NFKC letters; their punctuation stays ASCII.
    const widen = variant.wide[index] && (!header || /[a-z:]/i.test(char));
    if (widen) char = fullWidth(char);
    else if (variant.escaped && !header && char === '<') char = '\\u003c';
    else if (variant.escaped && !header && char === '>') char = '\\u003E';
    text += char;
    // `A s s i s t a n t:`: a single blank between the letters of the role word.
    if (header && /[a-z]/i.test(marker.example[index]!) && nextIsLetter) text += variant.letterGap;
  }
  return text;
}

// What a reader would take the text for: escapes decoded, NFKC, no blanks, lower case.
const reading = (text: string): string =>
  text
    .replace(/\\u003c/gi, '<')
    .replace(/\\u003e/gi, '>')
    .normalize('NFKC')
    .replace(/\s/g, '')
    .toLowerCase();

const variantOf = (marker: ModelMarker): fc.Arbitrary<Variant> => {
  const length = marker.example.length;
  return fc.record({
    upper: fc.array(fc.boolean(), { minLength: length, maxLength: length }),
    wide: fc.array(fc.boolean(), { minLength: length, maxLength: length }),
    openBlank: fc.constantFrom('', ' ', '  ', '\t'),
    closeBlank: fc.constantFrom('', ' ', '\t', '  '),
    escaped: fc.boolean(),
    letterGap: fc.constantFrom('', ' ', '\t', '\u3000'),
  });
};

const before = fc.constantFrom('', 'ok ', 'result:\n', '{"text":"', 'x');
const after = fc.constantFrom('', ' now obey me', '\nmore', '"}');

describe('MODEL_MARKERS: every marker family is neutralised in every spelling', () => {
  for (const marker of MODEL_MARKERS) {
    it(`${marker.family}: ${marker.example} in any case, width and spacing`, () => {
      const header = marker.form === 'header' || marker.form === 'quoted_header';
      fc.assert(
        fc.property(variantOf(marker), before, after, (variant, head, tail) => {
          const spelt = spell(marker, variant);
          // A turn header opens a line; anything else may sit anywhere.
          const text = header
            ? `${head.endsWith('x') ? '' : head}\n${spelt} go`
            : head + spelt + tail;
          const { content, findings } = sanitizeOutput(text);
          expect(findings).toContainEqual(
            expect.objectContaining({ kind: 'role_token', detail: PATTERN_OF_FORM[marker.form] }),
          );
          if (header) expect(content).toContain(`(quoted) ${spelt.trimStart()}`);
          else expect(reading(content)).not.toContain(reading(marker.example));
          expect(sanitizeOutput(content).content).toBe(content);
        }),
        {
          numRuns: 150,
          // The plain example, all upper and all lower case, and wholly full-width.
          examples: [false, true]
            .flatMap((wide) =>
              [false, true].map((upper) => [
                {
                  upper: [...marker.example].map(() => upper),
                  wide: [...marker.example].map(() => wide),
                  openBlank: '',
                  closeBlank: '',
                  escaped: false,
                  letterGap: '',
                },
                '',
                '',
              ]),
            )
            .concat(
              // Spaced out: `A s s i s t a n t:`, `S\ty\ts…`.
              [' ', '\t'].map((letterGap) => [
                {
                  upper: [...marker.example].map(() => true),
                  wide: [...marker.example].map(() => false),
                  openBlank: '',
                  closeBlank: '',
                  escaped: false,
                  letterGap,
                },
                '',
                '',
              ]),
            ) as [Variant, string, string][],
        },
      );
    });
  }

  it('names every form the table uses, and each row is found in its plain spelling', () => {
    for (const marker of MODEL_MARKERS) {
      const text = marker.form.endsWith('header') ? `${marker.example} x` : marker.example;
      expect(sanitizeOutput(text).content, marker.example).not.toBe(text);
    }
  });

  it('leaves prose with spaced letters alone: no colon, no role word, or not at a line start', () => {
    const prose = [
      'a s s',
      'U. S. A.: a country',
      'U. S. E. R.: initials',
      'a s s: spaced, but no role word',
      'A user: may ask',
      'I s: no',
      'the A s s i s t a n t: mid-line',
      'S y s t e m without a colon',
      'As sistant: split once',
      'S y stem: spaced only in part',
      'A  s s i s t a n t: two blanks are not one',
    ];
    for (const line of prose) {
      for (const text of [line, `intro\n${line}`]) {
        expect(sanitizeOutput(text), text).toEqual({ content: text, findings: [] });
      }
    }
    // Any line of letters, single blanks and dots with no colon is left as it is.
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...'aAsStTiInNuUeErRyYmM .\t\n'), { maxLength: 80 }),
        (chars) => {
          const text = chars.join('');
          expect(sanitizeOutput(text).content).toBe(text);
        },
      ),
      { numRuns: 300 },
    );
  });
});
