import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { VeridexError } from '../../src/errors/index.js';
import {
  canonicalIdentity,
  confusableSkeleton,
  identityKey,
  MAX_IDENTITY_LENGTH,
  sameIdentity,
} from '../../src/identity/index.js';

// Characters that render as nothing (or as a blank) and must not make a second identity.
const INVISIBLES = [
  '\u200b', // zero width space
  '\u200c', // zero width non-joiner
  '\u200d', // zero width joiner
  '\u2060', // word joiner
  '\ufeff', // zero width no-break space
  '\u00ad', // soft hyphen
  '\u034f', // combining grapheme joiner
  '\u180e', // mongolian vowel separator
  '\u3164', // hangul filler
  '\u115f', // hangul choseong filler
  '\uffa0', // halfwidth hangul filler
  '\ufe0f', // variation selector 16
  '\u{e0041}', // tag latin capital letter a
  '\u202e', // right-to-left override
];

// Look-alikes from other scripts, each confusable with the Latin letter it replaces.
const HOMOGLYPHS: Record<string, string[]> = {
  a: ['\u0430', '\u0251'], // Cyrillic а, Latin alpha
  c: ['\u0441', '\u03f2'], // Cyrillic с, Greek lunate sigma
  e: ['\u0435'], // Cyrillic е
  o: ['\u043e', '\u03bf', '\u0585'], // Cyrillic о, Greek omicron, Armenian օ
  p: ['\u0440', '\u03c1'], // Cyrillic р, Greek rho
  x: ['\u0445'], // Cyrillic х
  y: ['\u0443'], // Cyrillic у
  s: ['\u0455'], // Cyrillic ѕ
  i: ['\u0456'], // Cyrillic і
  l: ['1', '|', '\u04cf'], // digit one, vertical bar, Cyrillic palochka
};

const ASCII_NAME = fc
  .array(fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789.-_@'.split('')), {
    minLength: 1,
    maxLength: 24,
  })
  .map((chars) => chars.join(''))
  .filter((name) => /[a-z0-9]/.test(name));

function expectInvalid(input: unknown) {
  let caught: unknown;
  try {
    canonicalIdentity(input);
  } catch (error) {
    caught = error;
  }
  expect(VeridexError.is(caught, 'identity_invalid'), String(caught)).toBe(true);
}

describe('canonicalIdentity', () => {
  it('folds case, width, spacing and invisible characters into one form', () => {
    for (const spelling of [
      'alice',
      'Alice',
      'ALICE',
      ' alice',
      'alice ',
      'alice\u200b',
      '\u2060al\u00adice',
      'ａｌｉｃｅ',
      'alice\u3164',
    ]) {
      expect(canonicalIdentity(spelling), JSON.stringify(spelling)).toBe('alice');
    }
    expect(canonicalIdentity('  Payout-Bot ')).toBe('payout-bot');
    expect(canonicalIdentity('Jean   Paul\tMarie')).toBe('jean paul marie');
    expect(canonicalIdentity('STRASSE')).toBe(canonicalIdentity('straße'));
  });

  it('refuses what cannot be an identity, with identity_invalid', () => {
    for (const input of [
      '',
      '   ',
      '\u200b\u200c',
      'ali\u0000ce',
      'bob\u0007',
      'x'.repeat(MAX_IDENTITY_LENGTH + 1),
      'private\ue000use',
      42,
      null,
      undefined,
      { id: 'alice' },
    ]) {
      expectInvalid(input);
    }
  });

  it('is idempotent (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), (text) => {
        let once: string;
        try {
          once = canonicalIdentity(text);
        } catch {
          return; // refused inputs have no canonical form
        }
        expect(canonicalIdentity(once)).toBe(once);
        expect(identityKey(once)).toBe(identityKey(text));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('identityKey (canonical form + confusable skeleton)', () => {
  it('makes the spoofed names of the red-team report one person', () => {
    for (const spoof of [
      'Payout-Bot',
      'payout-bot ',
      'PAYOUT-BOT',
      'рayout-bot',
      'payout\u200b-bot',
    ]) {
      expect(sameIdentity(spoof, 'payout-bot'), spoof).toBe(true);
    }
    for (const spoof of ['Alice', 'ALICE', ' alice', '\u0430lice', 'alice\u200b', 'a1ice']) {
      expect(sameIdentity(spoof, 'alice'), spoof).toBe(true);
    }
    expect(sameIdentity('alice', 'alicia')).toBe(false);
    expect(sameIdentity('bob', 'rob')).toBe(false);
    expect(sameIdentity('', '')).toBe(false);
    expect(sameIdentity('ok', 42)).toBe(false);
  });

  it('is the UTS #39 skeleton: prototypes from confusables.txt, applied once', () => {
    // Entries from Unicode 17.0 confusables.txt: 0430 → 0061, 0031 → 006C, 006D → 0072 006E.
    expect(confusableSkeleton('\u0430')).toBe('a');
    expect(confusableSkeleton('1')).toBe('l');
    expect(confusableSkeleton('m')).toBe('rn');
    expect(confusableSkeleton('rn')).toBe('rn');
    expect(confusableSkeleton('a\u200bb')).toBe('ab');
  });

  it('survives case changes, invisible characters, whitespace and full-width forms (property)', () => {
    const spelling = fc.record({
      upper: fc.array(fc.boolean(), { minLength: 24, maxLength: 24 }),
      invisible: fc.array(fc.option(fc.constantFrom(...INVISIBLES)), {
        minLength: 25,
        maxLength: 25,
      }),
      fullWidth: fc.array(fc.boolean(), { minLength: 24, maxLength: 24 }),
      pad: fc.constantFrom('', ' ', '  ', '\t', '\u00a0', '\u3000'),
    });
    fc.assert(
      fc.property(ASCII_NAME, spelling, (name, how) => {
        let spoof = how.pad;
        [...name].forEach((char, index) => {
          spoof += how.invisible[index] ?? '';
          let next = how.upper[index] ? char.toUpperCase() : char;
          if (how.fullWidth[index] && next >= '!' && next <= '~') {
            next = String.fromCodePoint(next.codePointAt(0)! + 0xfee0);
          }
          spoof += next;
        });
        spoof += (how.invisible[24] ?? '') + how.pad;
        let key: string;
        try {
          key = identityKey(spoof);
        } catch (error) {
          // Full-width punctuation whose confusables.txt prototype is another symbol
          // (U+FF0D reads as ー) is refused as ambiguous; nothing else may be refused.
          expect(VeridexError.is(error, 'identity_ambiguous'), String(error)).toBe(true);
          expect(how.fullWidth.some(Boolean)).toBe(true);
          return;
        }
        expect(key).toBe(identityKey(name));
      }),
      { numRuns: 1000 },
    );
  });

  it('refuses a look-alike that NFKC would turn into another letter (lunate sigma ϲ → ς)', () => {
    let caught: unknown;
    try {
      identityKey('\u03f2arol');
    } catch (error) {
      caught = error;
    }
    expect(VeridexError.is(caught, 'identity_ambiguous'), String(caught)).toBe(true);
  });

  it('folds look-alike letters from other scripts, or refuses the name (property)', () => {
    fc.assert(
      fc.property(
        ASCII_NAME,
        fc.array(fc.nat(), { minLength: 24, maxLength: 24 }),
        (name, picks) => {
          const spoof = [...name]
            .map((char, index) => {
              const options = HOMOGLYPHS[char];
              return options ? options[picks[index]! % options.length]! : char;
            })
            .join('');
          let key: string;
          try {
            key = identityKey(spoof);
          } catch (error) {
            // The only way out: refused as ambiguous — never accepted as someone else.
            expect(VeridexError.is(error, 'identity_ambiguous'), String(error)).toBe(true);
            return;
          }
          expect(key).toBe(identityKey(name));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('keeps names apart that differ in a letter nobody confuses (property)', () => {
    // Latin lower-case letters whose confusables.txt prototype is themselves (m → rn is the one exception).
    const letters = fc
      .array(fc.constantFrom(...'abcdefghjkpqrstuvwxyz'.split('')), { minLength: 1, maxLength: 16 })
      .map((chars) => chars.join(''));
    fc.assert(
      fc.property(letters, letters, (a, b) => {
        fc.pre(a !== b);
        expect(identityKey(a)).not.toBe(identityKey(b));
      }),
      { numRuns: 2000 },
    );
  });

  it('maps long text in one pass (the skeleton also serves counterparty screening)', () => {
    expect(confusableSkeleton('\u0430\u200b'.repeat(200_000))).toBe('a'.repeat(200_000));
  });
});

// Characters that are not Default_Ignorable yet can render as nothing: one more would make
// `alice` + it a second identity that reads as alice.
const BLANK_RENDERING = [
  '\u2800', // braille pattern blank (So)
  '\u{1D159}', // musical symbol null notehead (So)
  '\u{16FE4}', // khitan small script filler (Mn)
];

describe('blank symbols and a dot on a soft-dotted letter (look-alikes that read as the name)', () => {
  it('refuses a blank-rendering character anywhere in a name (property)', () => {
    fc.assert(
      fc.property(ASCII_NAME, fc.constantFrom(...BLANK_RENDERING), fc.nat(), (name, blank, at) => {
        const index = at % (name.length + 1);
        expectInvalid(`${name.slice(0, index)}${blank}${name.slice(index)}`);
      }),
    );
  });

  it('refuses every symbol that is still outside ASCII after NFKC, whatever the font draws for it (property)', () => {
    const symbol = fc
      .integer({ min: 0x80, max: 0x3ffff })
      .map((code) => String.fromCodePoint(code))
      .filter((char) => /(?![\u0000-\u007f])\p{S}/u.test(char.normalize('NFKC')));
    fc.assert(
      fc.property(ASCII_NAME, symbol, (name, char) => {
        expectInvalid(`${name}${char}`);
      }),
      { numRuns: 500 },
    );
  });

  it('keeps ASCII symbols a name may hold (alice+ops@example.com, o$car, a^b)', () => {
    for (const name of ['alice+ops@example.com', 'o$car', 'a^b', 'x=y', 'a~b', 'a|b']) {
      expect(canonicalIdentity(name)).toBe(name);
    }
  });

  it('reads a dot above after i, j or another soft-dotted letter as the letter alone (property)', () => {
    const dotted = fc.array(fc.boolean(), { minLength: 24, maxLength: 24 });
    fc.assert(
      fc.property(ASCII_NAME, dotted, (name, where) => {
        const spelled = [...name]
          .map((char, index) => (/[ij]/.test(char) && where[index] ? `${char}\u0307` : char))
          .join('');
        expect(identityKey(spelled)).toBe(identityKey(name));
        expect(sameIdentity(spelled, name)).toBe(true);
      }),
    );
    // Turkish capital İ folds to i + U+0307; Cyrillic і is soft-dotted too; a mark below between
    // the letter and the dot does not hide it.
    expect(sameIdentity('al\u0130ce', 'alice')).toBe(true);
    expect(sameIdentity('al\u0456\u0307ce', 'alice')).toBe(true);
    expect(sameIdentity('ali\u0323\u0307ce', 'ali\u0323ce')).toBe(true);
    // A dot above on a letter that is not soft-dotted stays a difference.
    expect(sameIdentity('alice\u0307', 'alice')).toBe(false);
  });
});
