import { prototypeOf } from '../identity/skeleton.js';
import { isHiddenCodePoint } from '../tools/hidden-characters.js';
import { escapeAt } from './scan-escapes.js';
import { LETTER_FORMS } from './scan-letter-forms.js';

/** A text folded for matching, with where each folded unit came from in the original. */
export interface Folded {
  text: string;
  /** Original index of each folded code unit. */
  origin: Int32Array;
  /** 1 where a separator (space, `_`, `-`, `*`, backtick) or a dropped joiner or tag preceded. */
  gap: Uint8Array;
}

const SEPARATORS = new Set([' ', '\t', '\n', '\r', '\f', '\v', '_', '-', '*', '`']);

/**
 * Folds `text` for matching, one code point at a time (linear), reading it as a model does:
 *
 * - escapes decoded first, one layer (`\u0049gnore`, `%3CIMPORTANT%3E`, `\n`: see `escapeAt`);
 * - Unicode tag characters (U+E0020–U+E007E, invisible) read as the ASCII they mirror;
 * - other hidden and control characters dropped; separators dropped, remembered as a gap;
 * - ASCII lower-cased; anything else NFKD'd, its combining marks (General_Category M) dropped,
 *   lower-cased, and mapped by `LETTER_FORMS` (small capitals, regional indicators, angle
 *   brackets) or else to its `confusables.txt` prototype.
 *
 * So `ＩＭＰＯＲＴＡＮＴ`, `Іmportant` with a Cyrillic І, `i m p o r t a n t`, `IMPOR\u200bTANT`,
 * `Ìmpórtant`, `I̲m̲p̲o̲r̲t̲a̲n̲t̲`, `ɪᴍᴘᴏʀᴛᴀɴᴛ` and `\u0049mportant` all fold to `important`, and
 * `〈` and `⟨` to `<`.
 */
export function foldForScan(text: string): Folded {
  const out = new FoldBuffer(text.length);
  let pendingGap = true;
  for (let index = 0; index < text.length; ) {
    const code = text.charCodeAt(index);
    // Plain ASCII (no escape can start here): the common case, without building strings.
    if (code < 0x80 && code !== 0x25 /* % */ && code !== 0x5c /* \ */) {
      if (ASCII_SEPARATOR[code] === 1) pendingGap = true;
      else if (code >= 0x20) {
        out.push(code >= 0x41 && code <= 0x5a ? code | 0x20 : code, index, pendingGap);
        pendingGap = false;
      }
      index++;
      continue;
    }
    const escaped = escapeAt(text, index);
    const codePoint = escaped ? escaped.codePoint : text.codePointAt(index)!;
    const width = escaped ? escaped.width : codePoint > 0xffff ? 2 : 1;
    for (const char of foldCodePoint(codePoint)) {
      if (SEPARATORS.has(char) || char.trim() === '') {
        pendingGap = true;
        continue;
      }
      if (char.charCodeAt(0) < 0x20) continue;
      // One entry per code unit (an astral character is two), so indices line up with `text`.
      for (let unit = 0; unit < char.length; unit++) {
        out.pushWide(char.charCodeAt(unit), index, pendingGap);
        pendingGap = false;
      }
    }
    index += width;
  }
  return out.folded();
}

// 1 for the ASCII code units that fold to a gap: the separators and the blanks `trim` drops.
const ASCII_SEPARATOR = new Uint8Array(0x80);
for (const char of SEPARATORS) ASCII_SEPARATOR[char.charCodeAt(0)] = 1;

// The folded units, their origins and gaps in typed arrays grown by doubling (a folding is
// about as long as its text; NFKD can lengthen it).
class FoldBuffer {
  private units: Uint16Array;
  private origin: Int32Array;
  private gap: Uint8Array;
  private length = 0;
  private surrogates = false;

  constructor(capacity: number) {
    this.units = new Uint16Array(capacity + 16);
    this.origin = new Int32Array(capacity + 16);
    this.gap = new Uint8Array(capacity + 16);
  }

  push(unit: number, origin: number, gap: boolean): void {
    if (this.length === this.units.length) this.grow();
    this.units[this.length] = unit;
    this.origin[this.length] = origin;
    this.gap[this.length] = gap ? 1 : 0;
    this.length++;
  }

  /** {@link push} for a unit that may be half of a surrogate pair (or a lone one). */
  pushWide(unit: number, origin: number, gap: boolean): void {
    if (unit >= 0xd800 && unit <= 0xdfff) this.surrogates = true;
    this.push(unit, origin, gap);
  }

  folded(): Folded {
    const units = this.units.subarray(0, this.length);
    return {
      // The decoder is exact for well-formed UTF-16; a lone surrogate must be kept as it is.
      text: this.surrogates ? unitsToString(units) : UTF16.decode(units),
      origin: this.origin.slice(0, this.length),
      gap: this.gap.slice(0, this.length),
    };
  }

  private grow(): void {
    const size = this.units.length * 2;
    const units = new Uint16Array(size);
    units.set(this.units);
    const origin = new Int32Array(size);
    origin.set(this.origin);
    const gap = new Uint8Array(size);
    gap.set(this.gap);
    this.units = units;
    this.origin = origin;
    this.gap = gap;
  }
}

function foldCodePoint(codePoint: number): string {
  // A tag character spells the ASCII character 0xE0000 below it (models read them).
  const ascii = codePoint >= 0xe0020 && codePoint <= 0xe007e ? codePoint - 0xe0000 : codePoint;
  if (ascii < 0x80) return String.fromCharCode(ascii).toLowerCase();
  if (isHiddenCodePoint(codePoint) || codePoint <= 0x9f) return '';
  return foldNonAscii(codePoint);
}

// Folded forms by code point, computed once each (NFKD and the property tests are the cost of
// a non-ASCII character). Bounded: cleared when full, so a text cannot grow it without end.
const NON_ASCII = new Map<number, string>();
const NON_ASCII_LIMIT = 4096;
const MARK = /^\p{M}$/u;

function foldNonAscii(codePoint: number): string {
  const known = NON_ASCII.get(codePoint);
  if (known !== undefined) return known;
  let result = '';
  for (const unit of withoutMarks(String.fromCodePoint(codePoint))) {
    const form = unit.charCodeAt(0) < 0x80 ? unit : LETTER_FORMS.get(unit);
    if (form !== undefined) {
      result += form;
      continue;
    }
    const prototype = prototypeOf(unit);
    if (prototype === undefined) result += unit;
    // A prototype can hold a small capital itself (`ɶ` → `oᴇ`).
    else for (const char of withoutMarks(prototype)) result += LETTER_FORMS.get(char) ?? char;
  }
  if (NON_ASCII.size >= NON_ASCII_LIMIT) NON_ASCII.clear();
  NON_ASCII.set(codePoint, result);
  return result;
}

// NFKD, lower-cased (which can add a mark: `İ` → `i̇`), combining marks removed.
function withoutMarks(text: string): string {
  let result = '';
  for (const char of text.normalize('NFKD').toLowerCase()) {
    if (!MARK.test(char)) result += char;
  }
  return result;
}

/** True when the folded unit at `index` is an ASCII letter or digit. */
export const isAlnum = (text: string, index: number): boolean => {
  const code = text.charCodeAt(index);
  return (code >= 97 && code <= 122) || (code >= 48 && code <= 57);
};

const PUNCTUATION_OR_SYMBOL = /^[\p{P}\p{S}]$/u;
// Whether a code unit is punctuation or a symbol, memoised (0 unknown, 1 no, 2 yes): the walk
// asks for every unit, and a property test per unit would dominate it. The apostrophe (every
// one folds to `'`) is a letter of English words, not a joiner: `credential's` stays two words.
const JOINER_MEMO = new Uint8Array(0x10000);
JOINER_MEMO[0x27] = 1;
const isJoiner = (text: string, index: number): boolean => {
  const code = text.charCodeAt(index);
  if (JOINER_MEMO[code] === 0) JOINER_MEMO[code] = PUNCTUATION_OR_SYMBOL.test(text[index]!) ? 2 : 1;
  return JOINER_MEMO[code] === 2;
};

/** Longest HTML tag dropped by {@link withoutJoiners} (folded units, `<` to `>`). */
const MAX_TAG = 200;

/**
 * The folding marker words are matched in (those of letters and digits only): `folded` with
 * every run of punctuation or symbols standing between two letters or digits without a space
 * dropped (`I.g.n.o.r.e`, `Ig·nore`, `ignore/previous`; not an apostrophe) and, with
 * `dropTags`, every HTML tag too (`Ig<b></b>nore`, `<span class="x">`). A dropped run or tag leaves a gap, as a
 * space would: the marker is read across it, and it bounds a word as the joiner did.
 * Punctuation beside a space stays (`you. Must` is two sentences), and needles that are
 * punctuation themselves (`~/.ssh`, `process.env`, `http://`) are matched in `folded` as it is.
 * Words are looked for with tags kept and dropped both: a tag's own text can be the marker
 * (`<ignore previous instructions>`).
 *
 * Linear: each unit is read once by the walk, and a tag's end is looked for at most
 * {@link MAX_TAG} units ahead, stopping at the next `<`.
 */
export function withoutJoiners(folded: Folded, dropTags = false): Folded {
  const { text, origin, gap } = folded;
  // The result is never longer than `folded`: typed arrays of its length, filled to `length`.
  const units = new Uint16Array(text.length);
  const origins = new Int32Array(text.length);
  const gaps = new Uint8Array(text.length);
  let length = 0;
  let pendingGap = false;
  const keep = (index: number) => {
    units[length] = text.charCodeAt(index);
    origins[length] = origin[index]!;
    gaps[length] = pendingGap || gap[index] === 1 ? 1 : 0;
    length++;
    pendingGap = false;
  };
  const tagEnd = (index: number) =>
    dropTags && text[index] === '<' ? htmlTagEnd(text, index) : -1;
  // The end of the joiner or tag at `index`, or -1 when it is neither.
  const stepOver = (index: number) => {
    const end = tagEnd(index);
    return end > 0 ? end : isJoiner(text, index) ? index + 1 : -1;
  };
  for (let index = 0; index < text.length; ) {
    let end = stepOver(index);
    if (end < 0) {
      keep(index);
      index++;
      continue;
    }
    // A run of joiners and tags with no blank inside it.
    while (end < text.length && gap[end] === 0) {
      const after = stepOver(end);
      if (after < 0) break;
      end = after;
    }
    const last = length > 0 ? units[length - 1]! : 0;
    const between =
      ((last >= 97 && last <= 122) || (last >= 48 && last <= 57)) &&
      gap[index] === 0 &&
      end < text.length &&
      gap[end] === 0 &&
      isAlnum(text, end);
    if (between) {
      pendingGap = true;
    } else {
      // Beside a blank: the joiners stay, the tags go (leaving a gap).
      for (let at = index; at < end; ) {
        const after = tagEnd(at);
        if (after > 0) {
          pendingGap = true;
          at = after;
        } else {
          keep(at);
          at++;
        }
      }
    }
    index = end;
  }
  return {
    text: UTF16.decode(units.subarray(0, length)),
    origin: origins.slice(0, length),
    gap: gaps.slice(0, length),
  };
}

// Code units back to a string, one for one and lone surrogates kept (as `join` kept them), in
// chunks that stay under the engine's argument limit.
function unitsToString(units: Uint16Array): string {
  let text = '';
  for (let from = 0; from < units.length; from += 8192) {
    text += String.fromCharCode(...units.subarray(from, from + 8192));
  }
  return text;
}

// Code units back to a string, one for one (a BOM kept, a lone surrogate one U+FFFD).
const UTF16 = new TextDecoder('utf-16le', { ignoreBOM: true });

// The index after an HTML tag opening at `at` (`<b>`, `</b>`, `<br/>`, `<a href=…>`: a letter
// after `<` or `</`, then anything but `<` up to `>`), or -1.
function htmlTagEnd(text: string, at: number): number {
  const nameAt = text[at + 1] === '/' ? at + 2 : at + 1;
  const initial = text.charCodeAt(nameAt);
  if (initial < 97 || initial > 122) return -1;
  for (let index = nameAt + 1; index < Math.min(text.length, at + MAX_TAG); index++) {
    if (text[index] === '>') return index + 1;
    if (text[index] === '<') return -1;
  }
  return -1;
}
