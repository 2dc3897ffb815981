/** The text without hidden characters, and what was removed (counts only). */
export interface HiddenStripping {
  text: string;
  /** Invisible format characters, tag characters, variation selectors, fillers. */
  hidden: number;
  /** C0/C1 controls other than tab, newline and CR before newline. */
  controls: number;
  /** Lone surrogates, replaced by U+FFFD. */
  invalid: number;
}

const KEEP = 0;
const HIDDEN = 1;
const CONTROL = 2;
const CONTEXT = 3; // decided by neighbours: CR, ZWJ, VS15, VS16
const SURROGATE = 4;

// Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties; a test checks this list
// against \p{Default_Ignorable_Code_Point} for every code point) — invisible by definition:
// soft hyphen, combining grapheme joiner, Arabic letter mark, Hangul fillers (U+115F, U+1160,
// U+3164, U+FFA0), Khmer inherent vowels, Mongolian variation selectors, zero-width
// characters, bidi controls, word joiner and invisible operators, variation selectors 1–16
// and 17–256, BOM, tag characters, shorthand format controls, musical formatting — plus the
// braille blank (U+2800) and interlinear annotation controls, which render as nothing too.
const HIDDEN_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0x00ad, 0x00ad],
  [0x034f, 0x034f],
  [0x061c, 0x061c],
  [0x115f, 0x1160],
  [0x17b4, 0x17b5],
  [0x180b, 0x180f],
  [0x200b, 0x200f],
  [0x202a, 0x202e],
  [0x2060, 0x206f],
  [0x2800, 0x2800],
  [0x3164, 0x3164],
  [0xfe00, 0xfe0f],
  [0xfeff, 0xfeff],
  [0xffa0, 0xffa0],
  [0xfff0, 0xfffb],
  [0x1bca0, 0x1bca3],
  [0x1d173, 0x1d17a],
  [0xe0000, 0xe0fff],
];

/** The code points {@link stripHidden} removes (except where context keeps them; see there). */
export function isHiddenCodePoint(codePoint: number): boolean {
  return HIDDEN_RANGES.some(([from, to]) => codePoint >= from && codePoint <= to);
}

const BMP = new Uint8Array(0x10000);
for (const [from, to] of HIDDEN_RANGES) {
  for (let code = from; code <= Math.min(to, 0xffff); code++) BMP[code] = HIDDEN;
}
for (let code = 0; code <= 0x9f; code++) {
  if (
    code <= 0x08 ||
    code === 0x0b ||
    code === 0x0c ||
    (code >= 0x0e && code <= 0x1f) ||
    code >= 0x7f
  ) {
    BMP[code] = CONTROL;
  }
}
BMP[0x0d] = CONTEXT;
BMP[0x200d] = CONTEXT;
BMP[0xfe0e] = CONTEXT;
BMP[0xfe0f] = CONTEXT;
for (let code = 0xd800; code <= 0xdfff; code++) BMP[code] = SURROGATE;

// Property lookups, memoised per code point (0 unknown, 1 no, 2 yes): a text cannot make the
// property tests run more than once per distinct character.
const PICTOGRAPHIC = {
  pattern: /^[\p{Extended_Pictographic}\p{Emoji_Modifier}]$/u,
  memo: undefined as Uint8Array | undefined,
};
const EMOJI = { pattern: /^\p{Emoji}$/u, memo: undefined as Uint8Array | undefined };
function test(property: typeof EMOJI, codePoint: number): boolean {
  property.memo ??= new Uint8Array(0x110000);
  let known = property.memo[codePoint]!;
  if (known === 0) {
    known = property.pattern.test(String.fromCodePoint(codePoint)) ? 2 : 1;
    property.memo[codePoint] = known;
  }
  return known === 2;
}

/**
 * True when `text` holds a character {@link stripHidden} keeps only because of its neighbours
 * (CR before LF, a joiner or presentation selector after an emoji, tag characters after a
 * flag): only then can removing text next to one (a redaction) orphan it. Native searches,
 * so the common answer costs almost nothing.
 */
export function holdsContextualCharacters(text: string): boolean {
  return (
    text.includes('\r') ||
    text.includes('\u200d') ||
    text.includes('\ufe0e') ||
    text.includes('\ufe0f') ||
    // Tag characters U+E0000–U+E0FFF: high surrogates DB40–DB43.
    text.includes('\udb40') ||
    text.includes('\udb41') ||
    text.includes('\udb42') ||
    text.includes('\udb43')
  );
}

/**
 * Removes characters a reader cannot see but a model reads: the hidden set above and C0/C1
 * controls (tab, newline and CR before newline stay); lone surrogates become U+FFFD. Kept in
 * context, because emoji need them: a zero-width joiner between two emoji (family and
 * profession emoji), VS15/VS16 right after an emoji (text or emoji presentation: one bit per
 * emoji, not a channel for a hidden message), and a valid emoji tag sequence (🏴 + 2–5 tag
 * letters/digits + CANCEL TAG, the subdivision flags of UTS #51).
 *
 * Decisions look at the last character *kept*, never at a removed one, so the result is a
 * fixed point: stripping it again changes nothing. One pass, linear.
 */
export function stripHidden(text: string): HiddenStripping {
  let hidden = 0;
  let controls = 0;
  let invalid = 0;
  // Appended as a rope the engine flattens once (faster than parts joined at the end).
  let result: string | undefined;
  let written = 0;
  let previousKept = -1;
  const drop = (index: number, length: number, replacement = '') => {
    result = (result ?? '') + text.slice(written, index) + replacement;
    written = index + length;
  };
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    const kind = BMP[code]!;
    if (kind === KEEP) {
      previousKept = code;
      continue;
    }
    if (kind === HIDDEN) {
      hidden++;
      drop(index, 1);
    } else if (kind === CONTROL) {
      controls++;
      drop(index, 1);
    } else if (kind === CONTEXT) {
      let keep: boolean;
      if (code === 0x0d) keep = text.charCodeAt(index + 1) === 0x0a;
      else if (code === 0x200d) {
        keep =
          (previousKept === 0xfe0f || (previousKept >= 0 && test(PICTOGRAPHIC, previousKept))) &&
          index + 1 < text.length &&
          test(PICTOGRAPHIC, text.codePointAt(index + 1)!);
      } else
        keep =
          previousKept >= 0 &&
          previousKept !== 0xfe0e &&
          previousKept !== 0xfe0f &&
          test(EMOJI, previousKept);
      if (keep) previousKept = code;
      else {
        if (code === 0x0d) controls++;
        else hidden++;
        drop(index, 1);
      }
    } else {
      const low = text.charCodeAt(index + 1);
      if (code > 0xdbff || !(low >= 0xdc00 && low <= 0xdfff)) {
        invalid++;
        drop(index, 1, '\ufffd');
        previousKept = 0xfffd;
        continue;
      }
      const codePoint = (code - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
      if (codePoint === 0x1f3f4) {
        const end = tagSequenceEnd(text, index + 2);
        previousKept = codePoint;
        index = (end === -1 ? index + 2 : end) - 1;
        continue;
      }
      if (
        (codePoint >= 0xe0000 && codePoint <= 0xe0fff) ||
        (codePoint >= 0x1bca0 && codePoint <= 0x1bca3) ||
        (codePoint >= 0x1d173 && codePoint <= 0x1d17a)
      ) {
        hidden++;
        drop(index, 2);
      } else {
        previousKept = codePoint;
      }
      index++;
    }
  }
  if (result === undefined) return { text, hidden, controls, invalid };
  return { text: result + text.slice(written), hidden, controls, invalid };
}

// After 🏴: 2 tag letters, 1–3 tag letters or digits, CANCEL TAG. Returns the index after it.
function tagSequenceEnd(text: string, from: number): number {
  let index = from;
  let count = 0;
  while (count < 6) {
    const codePoint = text.codePointAt(index);
    if (codePoint === undefined) return -1;
    if (codePoint === 0xe007f) return count >= 3 ? index + 2 : -1;
    const letter = codePoint >= 0xe0061 && codePoint <= 0xe007a;
    const digit = codePoint >= 0xe0030 && codePoint <= 0xe0039;
    if (!(letter || (digit && count >= 2))) return -1;
    count++;
    index += 2;
  }
  return -1;
}
