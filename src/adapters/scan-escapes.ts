/** One escape read as the character it spells: its code point and how many code units it spans. */
export interface ScanEscape {
  codePoint: number;
  width: number;
}

// JSON and JavaScript escapes of one punctuation character (`<\/IMPORTANT>`). Letter escapes
// (`\n`, `\t`) are left as written: `Do\not\tell` must keep its letters, and the backslash
// is read as a joiner between them (`withoutJoiners`).
const SHORT: Readonly<Record<string, number>> = {
  '"': 0x22,
  "'": 0x27,
  '/': 0x2f,
  '\\': 0x5c,
};

/**
 * The escape starting at `text[index]`, as a model reading the text would decode it: JSON and
 * JavaScript escapes (`\u0049`, a `\uD83D\uDE00` surrogate pair, `\u{49}`, `\x49`, `\"`,
 * `\/`, `\\`; not `\n` and other letter escapes), and URL percent-escapes (`%3C`, and a whole
 * UTF-8 sequence such as `%C3%B3`). `undefined` where nothing is escaped (or the escape is
 * malformed: it is then read as written).
 *
 * One layer only: the decoded character is not decoded again (`%253C` is `%3C`, not `<`).
 * Reads at most 12 code units past `index`, so a scan calling it at every index is linear.
 *
 * @example escapeAt('\\u0049gnore', 0) // { codePoint: 0x49, width: 6 }
 */
export function escapeAt(text: string, index: number): ScanEscape | undefined {
  const first = text.charCodeAt(index);
  if (first === 0x25 /* % */) return percentAt(text, index);
  if (first !== 0x5c /* \ */) return undefined;
  const kind = text[index + 1];
  if (kind === 'u') return unicodeAt(text, index);
  if (kind === 'x') {
    const value = hexValue(text, index + 2, 2);
    return value < 0 ? undefined : { codePoint: value, width: 4 };
  }
  const short = kind === undefined ? undefined : SHORT[kind];
  return short === undefined ? undefined : { codePoint: short, width: 2 };
}

function unicodeAt(text: string, index: number): ScanEscape | undefined {
  if (text[index + 2] === '{') {
    // `\u{…}`: one to six hex digits, then `}`.
    let end = index + 3;
    while (end < index + 9 && hexDigit(text.charCodeAt(end)) >= 0) end++;
    const value = hexValue(text, index + 3, end - index - 3);
    if (end === index + 3 || text[end] !== '}' || value > 0x10ffff || isSurrogate(value)) {
      return undefined;
    }
    return { codePoint: value, width: end + 1 - index };
  }
  const value = hexValue(text, index + 2, 4);
  if (value < 0) return undefined;
  if (value >= 0xd800 && value <= 0xdbff && text.startsWith('\\u', index + 6)) {
    const low = hexValue(text, index + 8, 4);
    if (low >= 0xdc00 && low <= 0xdfff) {
      return { codePoint: 0x10000 + ((value - 0xd800) << 10) + (low - 0xdc00), width: 12 };
    }
  }
  // A lone surrogate is no character: read it as the replacement character.
  return { codePoint: isSurrogate(value) ? 0xfffd : value, width: 6 };
}

// `%XX`: an ASCII byte, or the lead byte of a UTF-8 sequence whose continuation bytes follow as
// `%XX` too. Invalid UTF-8 (stray continuation bytes, overlong forms, surrogates) is left as is.
function percentAt(text: string, index: number): ScanEscape | undefined {
  const lead = hexValue(text, index + 1, 2);
  if (lead < 0) return undefined;
  if (lead < 0x80) return { codePoint: lead, width: 3 };
  const length = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc2 ? 2 : 0;
  if (length === 0 || lead > 0xf4) return undefined;
  let codePoint = lead & (0x7f >> length);
  for (let byte = 1; byte < length; byte++) {
    const at = index + byte * 3;
    const next = text[at] === '%' ? hexValue(text, at + 1, 2) : -1;
    if (next < 0x80 || next > 0xbf) return undefined;
    codePoint = (codePoint << 6) | (next & 0x3f);
  }
  const least = length === 2 ? 0x80 : length === 3 ? 0x800 : 0x10000;
  if (codePoint < least || codePoint > 0x10ffff || isSurrogate(codePoint)) return undefined;
  return { codePoint, width: length * 3 };
}

/** The value of `count` hex digits at `start`, or -1 when any is missing. */
function hexValue(text: string, start: number, count: number): number {
  let value = 0;
  for (let index = start; index < start + count; index++) {
    const digit = hexDigit(text.charCodeAt(index));
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

function hexDigit(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  const lower = code | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

const isSurrogate = (value: number): boolean => value >= 0xd800 && value <= 0xdfff;
