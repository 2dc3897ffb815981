/**
 * Character classes and run scanning for the credential scanner. Every scan here is a plain
 * loop over UTF-16 code units with a table lookup: no backtracking, so the scanner's running
 * time is linear by construction (each rule documents why no stretch of text is read more than
 * a bounded number of times).
 */

// One bit per ASCII character property; a class is an OR of bits.
export const DIGIT = 1;
export const UPPER = 2;
export const LOWER = 4;
export const UNDERSCORE = 8;
export const DASH = 16;
export const PLUS = 32;
export const SLASH = 64;
export const DOT = 128;
export const SPACE = 256;
export const EQUALS = 512;
export const HEX_LETTER = 1024;
export const QUOTE = 2048;
export const COMMA = 4096;
export const SEMICOLON = 8192;
export const COLON = 16384;
export const AT = 32768;
export const TILDE = 65536;
export const PERCENT = 131072;
export const BACKSLASH = 262144;
export const PAREN = 524288;
/** `[a-f]`: lower-case hex letters (Twilio API keys). */
export const LOWER_HEX_LETTER = 1048576;

export const LETTER = UPPER | LOWER;
export const ALNUM = DIGIT | LETTER;
/** `[A-Za-z0-9_]` */
export const WORD = ALNUM | UNDERSCORE;
/** `[A-Za-z0-9_-]`: base64url, and most vendors' token alphabets. */
export const TOKEN = WORD | DASH;
/** `[A-Za-z0-9+/]`: standard base64 without padding. */
export const BASE64 = ALNUM | PLUS | SLASH;

const TABLE = new Uint32Array(128);
for (let code = 0; code < 128; code++) {
  const char = String.fromCharCode(code);
  let bits = 0;
  if (code >= 48 && code <= 57) bits |= DIGIT;
  if (code >= 65 && code <= 90) bits |= UPPER;
  if (code >= 97 && code <= 122) bits |= LOWER;
  if (/[a-fA-F]/.test(char)) bits |= HEX_LETTER;
  if (code >= 97 && code <= 102) bits |= LOWER_HEX_LETTER;
  if (code === 32 || (code >= 9 && code <= 13)) bits |= SPACE;
  const single: Record<string, number> = {
    _: UNDERSCORE,
    '-': DASH,
    '+': PLUS,
    '/': SLASH,
    '.': DOT,
    '=': EQUALS,
    '"': QUOTE,
    "'": QUOTE,
    '`': QUOTE,
    ',': COMMA,
    ';': SEMICOLON,
    ':': COLON,
    '@': AT,
    '~': TILDE,
    '%': PERCENT,
    '\\': BACKSLASH,
    '(': PAREN,
    ')': PAREN,
  };
  bits |= single[char] ?? 0;
  TABLE[code] = bits;
}

/** True when the code unit is ASCII and has one of the bits of `mask`. */
export function has(code: number, mask: number): boolean {
  return code < 128 && (TABLE[code]! & mask) !== 0;
}

/** Index just past the run of ASCII characters in `mask` that starts at `from`. */
export function runEnd(text: string, from: number, mask: number): number {
  let index = from;
  while (index < text.length) {
    const code = text.charCodeAt(index);
    if (code >= 128 || (TABLE[code]! & mask) === 0) break;
    index++;
  }
  return index;
}

/**
 * Index of the first character at or after `from` that is ASCII and in `stop`, or where a
 * redaction marker starts (or the end). Stopping at markers keeps redaction idempotent: a
 * marker that replaced text with a space in it must not join two runs on the next pass.
 */
export function runUntil(text: string, from: number, stop: number): number {
  let index = from;
  while (index < text.length) {
    const code = text.charCodeAt(index);
    if (code < 128 && ((TABLE[code]! & stop) !== 0 || (code === 91 && isMarkerAt(text, index)))) {
      break;
    }
    index++;
  }
  return index;
}

/** True when the character before `index` is absent or not in `mask` (a left boundary). */
export function startsRun(text: string, index: number, mask: number): boolean {
  return index === 0 || !has(text.charCodeAt(index - 1), mask);
}

/** True when every character of `text[from, to)` is in `mask`. */
export function allIn(text: string, from: number, to: number, mask: number): boolean {
  return runEnd(text, from, mask) >= to;
}

/** Bits present among the characters of `text[from, to)` (ASCII only). */
export function bitsOf(text: string, from: number, to: number): number {
  let bits = 0;
  for (let index = from; index < to; index++) {
    const code = text.charCodeAt(index);
    if (code < 128) bits |= TABLE[code]!;
  }
  return bits;
}

/**
 * The code unit with an upper-case ASCII letter read as lower case, anything else unchanged.
 * The one case fold of the redactor and the sanitiser: only letters are folded (OR-ing 0x20
 * into every code unit turns `_` into DEL and CR into `-`, so a literal holding `_` never
 * matched).
 */
export const lowerAscii = (code: number): number => (code >= 65 && code <= 90 ? code + 32 : code);

/** True when `text` has `lower` (an ASCII lower-case literal) at `index`, in any case. */
export function startsWithFolded(text: string, lower: string, index: number): boolean {
  if (index + lower.length > text.length) return false;
  for (let offset = 0; offset < lower.length; offset++) {
    if (lowerAscii(text.charCodeAt(index + offset)) !== lower.charCodeAt(offset)) return false;
  }
  return true;
}

/** Marker every redaction writes; text that already is one is never redacted again. */
export const MARKER_PREFIX = '[REDACTED';

/** True when a redaction marker starts at `index`. */
export function isMarkerAt(text: string, index: number): boolean {
  return text.charCodeAt(index) === 91 && text.startsWith(MARKER_PREFIX, index);
}

/**
 * Context positions (ends of key words) in increasing order, asked about in increasing order:
 * "which one ended last, at or before `at`?" in amortised constant time.
 */
export class RecentPositions {
  readonly #ends: readonly number[];
  #next = 0;
  #last = -1;

  constructor(ends: readonly number[]) {
    this.#ends = ends;
  }

  /** The last position at most `at` (or recorded), -1 when none; `at` must not decrease between calls. */
  latest(at: number): number {
    while (this.#next < this.#ends.length && this.#ends[this.#next]! <= at) {
      this.#last = Math.max(this.#last, this.#ends[this.#next]!);
      this.#next++;
    }
    return this.#last;
  }

  /** Adds a position already passed (a candidate just redacted, context for the next one). */
  record(end: number): void {
    this.#last = Math.max(this.#last, end);
  }
}
