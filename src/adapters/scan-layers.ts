import { escapeAt } from './scan-escapes.js';

/** A text decoded one layer further, with where each of its code units came from. */
export interface DecodedLayer {
  text: string;
  /** Index in the text it was decoded from of each code unit. */
  origin: Int32Array;
}

/**
 * The text with every URL percent-escape decoded once (`%253C` → `%3C`, `%C3%B3` → `ó`), or
 * `undefined` when it holds no escaped `%` (`%25`): the scan's folding already decodes one
 * layer, so only a text whose escapes were themselves escaped has another layer to read.
 * Linear: one pass, each escape read in at most 12 code units (see `escapeAt`).
 */
export function percentLayer(text: string): DecodedLayer | undefined {
  if (!text.includes('%25')) return undefined;
  return decodeEscapes(text, '%');
}

/**
 * The text with every JSON, JavaScript and URL escape decoded once (`\u0053` → `S`), or
 * `undefined` when it holds none: where base64 written as escapes is looked for (the folding
 * reads escapes for its markers, but a base64 run is found in the text as written). Linear.
 */
export function escapeLayer(text: string): DecodedLayer | undefined {
  if (!text.includes('\\') && !text.includes('%')) return undefined;
  const layer = decodeEscapes(text, '\\%');
  return layer.text.length === text.length ? undefined : layer;
}

// One pass: each escape at a character of `starts` decoded, in at most 12 code units.
function decodeEscapes(text: string, starts: string): DecodedLayer {
  // Never longer than `text`: an escape spans three units or more and decodes to one or two.
  const origin = new Int32Array(text.length);
  let length = 0;
  let decoded = '';
  let from = 0;
  const copy = (to: number) => {
    decoded += text.slice(from, to);
    for (let index = from; index < to; index++) origin[length++] = index;
  };
  for (let at = 0; at < text.length; at++) {
    if (at < from || !starts.includes(text[at]!)) continue;
    const escaped = escapeAt(text, at);
    if (!escaped) continue;
    copy(at);
    const char = String.fromCodePoint(escaped.codePoint);
    decoded += char;
    for (let unit = 0; unit < char.length; unit++) origin[length++] = at;
    from = at + escaped.width;
  }
  copy(text.length);
  return { text: decoded, origin: origin.subarray(0, length) };
}

/** Shortest run of base64 characters decoded (a model is asked to decode sentences). */
export const MIN_BASE64_RUN = 16;
/** Shortest readable stretch of decoded bytes that is scanned (what 16 base64 units hold). */
export const MIN_READABLE = 12;
/** Shortest run of hex digits decoded (16 bytes). */
export const MIN_HEX_RUN = 32;
/** Shortest run of base32 characters decoded (15 bytes). */
export const MIN_BASE32_RUN = 24;

/** One run of encoded text and a readable stretch it decodes to (a run may give several). */
export interface Base64Run {
  start: number;
  end: number;
  decoded: string;
}

const isBase64Unit = (code: number): boolean =>
  (code >= 0x41 && code <= 0x5a) ||
  (code >= 0x61 && code <= 0x7a) ||
  (code >= 0x30 && code <= 0x39) ||
  code === 0x2b ||
  code === 0x2f ||
  code === 0x2d ||
  code === 0x5f;
const isBlank = (code: number): boolean =>
  code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
const isHexDigit = (code: number): boolean =>
  (code >= 0x30 && code <= 0x39) ||
  (code >= 0x41 && code <= 0x46) ||
  (code >= 0x61 && code <= 0x66);
const isBase32Unit = (code: number): boolean =>
  (code >= 0x41 && code <= 0x5a) || (code >= 0x32 && code <= 0x37);

const LENIENT_UTF8 = new TextDecoder('utf-8');
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/**
 * Every run of encoded text in `text` a model would decode, with the readable stretches it
 * decodes to: base64 (standard or URL-safe, `=` padding, blanks and line breaks between its
 * pieces ignored, read at each of the four alignments, so a run that starts inside a word is
 * still found), hex (32+ digits) and base32 (24+ characters), and base64 inside a decoded
 * stretch once more. A stretch is at least {@link MIN_READABLE} characters of valid UTF-8
 * without control characters other than blanks: identifiers, hashes and keys decode to bytes
 * that are not text, and a stray non-text byte ends a stretch rather than hiding the run.
 * Linear: each unit is read once by each walk, and each run decoded a bounded number of times.
 */
export function base64Runs(text: string, depth = 0): Base64Run[] {
  const runs: Base64Run[] = [];
  const add = (start: number, end: number, stretches: readonly string[]) => {
    for (const decoded of stretches) {
      runs.push({ start, end, decoded });
      if (depth === 0) {
        for (const inner of base64Runs(decoded, 1))
          runs.push({ start, end, decoded: inner.decoded });
      }
    }
  };
  for (let index = 0; index < text.length; ) {
    if (!isBase64Unit(text.charCodeAt(index))) {
      index++;
      continue;
    }
    const start = index;
    let end = index;
    let units = '';
    while (index < text.length) {
      const code = text.charCodeAt(index);
      if (isBase64Unit(code)) {
        const from = index;
        while (index < text.length && isBase64Unit(text.charCodeAt(index))) index++;
        units += text.slice(from, index);
        end = index;
      } else if (isBlank(code)) {
        index++;
      } else {
        break;
      }
    }
    while (end < text.length && text.charCodeAt(end) === 0x3d && end - index < 2) end++;
    index = Math.max(index, end);
    if (units.length >= MIN_BASE64_RUN) add(start, end, base64Stretches(units));
  }
  for (const [isUnit, min, decode] of [
    [
      isHexDigit,
      MIN_HEX_RUN,
      (run: string) => Buffer.from(run.length % 2 ? run.slice(1) : run, 'hex'),
    ],
    [isBase32Unit, MIN_BASE32_RUN, base32Bytes],
  ] as const) {
    for (let index = 0; index < text.length; ) {
      if (!isUnit(text.charCodeAt(index))) {
        index++;
        continue;
      }
      const start = index;
      while (index < text.length && isUnit(text.charCodeAt(index))) index++;
      let end = index;
      while (end < text.length && text.charCodeAt(end) === 0x3d && end - index < 6) end++;
      if (index - start >= min)
        add(start, end, readableStretches(decode(text.slice(start, index))));
      index = end;
    }
  }
  return runs;
}

/** The readable stretches of base64 `units` at each of the four alignments, once each. */
function base64Stretches(units: string): string[] {
  const standard = units.replace(/-/g, '+').replace(/_/g, '/');
  const found = new Set<string>();
  for (let skip = 0; skip < 4 && standard.length - skip >= MIN_BASE64_RUN; skip++) {
    const aligned = standard.slice(skip); // a last partial quantum decodes as far as it goes
    for (const stretch of readableStretches(Buffer.from(aligned, 'base64'))) found.add(stretch);
  }
  return [...found];
}

function base32Bytes(run: string): Buffer {
  const bytes: number[] = [];
  let value = 0;
  let bits = 0;
  for (let index = 0; index < run.length; index++) {
    value = ((value << 5) | BASE32.indexOf(run[index]!)) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(bytes);
}

/** The stretches of `bytes` that read as text: decoded leniently, split at what is not text. */
function readableStretches(bytes: Uint8Array): string[] {
  const decoded = LENIENT_UTF8.decode(bytes);
  const stretches: string[] = [];
  let from = 0;
  const close = (at: number) => {
    if (at - from >= MIN_READABLE) stretches.push(decoded.slice(from, at));
    from = at + 1;
  };
  for (let index = 0; index < decoded.length; index++) {
    const code = decoded.charCodeAt(index);
    if (
      (code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) ||
      code === 0x7f ||
      code === 0xfffd
    ) {
      close(index);
    }
  }
  close(decoded.length);
  return stretches;
}
