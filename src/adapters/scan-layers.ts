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
  // Never longer than `text`: an escape spans three units or more and decodes to one or two.
  const origin = new Int32Array(text.length);
  let length = 0;
  let decoded = '';
  let from = 0;
  const copy = (to: number) => {
    decoded += text.slice(from, to);
    for (let index = from; index < to; index++) origin[length++] = index;
  };
  for (let at = text.indexOf('%'); at !== -1; at = text.indexOf('%', Math.max(at + 1, from))) {
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

/** One run of base64 in a text and the text it decodes to. */
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

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Every run of at least {@link MIN_BASE64_RUN} base64 characters (standard or URL-safe, `=`
 * padding allowed at its end) in `text` that decodes to readable text — valid UTF-8 without
 * control characters other than blanks — with what it decodes to. Identifiers, hashes and keys
 * decode to bytes that are not text and are left out. Linear: each unit is read once by the
 * walk and each run decoded once.
 */
export function base64Runs(text: string): Base64Run[] {
  const runs: Base64Run[] = [];
  for (let index = 0; index < text.length; ) {
    if (!isBase64Unit(text.charCodeAt(index))) {
      index++;
      continue;
    }
    const start = index;
    while (index < text.length && isBase64Unit(text.charCodeAt(index))) index++;
    let end = index;
    while (end < text.length && end - index < 2 && text.charCodeAt(end) === 0x3d) end++;
    if (index - start >= MIN_BASE64_RUN) {
      const decoded = readable(text.slice(start, end));
      if (decoded !== undefined) runs.push({ start, end, decoded });
    }
    index = end;
  }
  return runs;
}

// The run decoded, when it is text a model would read as such.
function readable(run: string): string | undefined {
  const bytes = Buffer.from(run.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  let decoded: string;
  try {
    decoded = UTF8.decode(bytes);
  } catch {
    return undefined;
  }
  for (let index = 0; index < decoded.length; index++) {
    const code = decoded.charCodeAt(index);
    if ((code < 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) || code === 0x7f) {
      return undefined;
    }
  }
  return decoded;
}
