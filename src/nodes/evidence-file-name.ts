import { sha256Hex } from '../audit/index.js';

/** Longest encoded thread id used as it is; longer ones are cut and suffixed with a hash. */
const MAX_ENCODED_LENGTH = 200;
const KEPT = /^[a-z0-9.-]$/;

/**
 * The file name of a thread's evidence bundle: `<encoded thread id>.json`. The encoding is
 * injective, so two threads never share a file — `acme/1` → `acme_2f1`, `acme_1` → `acme_5f1`:
 * lower-case ASCII letters, digits, `.` and `-` stay; every other ASCII character (the escape
 * character `_` and upper-case letters included, so case-insensitive file systems cannot merge
 * `Acme` and `acme`) becomes `_` and two lower-case hex digits, every other code point `_u`
 * and six. A leading `.` is escaped too
 * (no hidden files, no `..`). Ids whose encoding exceeds 200 characters keep its first 150,
 * then `~` (which the encoding never produces) and 32 hex digits of the id's SHA-256.
 *
 * @example evidenceFileName('acme/1') // 'acme_2f1.json'
 */
export function evidenceFileName(threadId: string): string {
  let encoded = '';
  for (const char of threadId) {
    if (KEPT.test(char) && !(encoded === '' && char === '.')) {
      encoded += char;
      continue;
    }
    const codePoint = char.codePointAt(0)!;
    // Code points, not UTF-8 bytes: two lone surrogates would both encode as U+FFFD.
    encoded +=
      codePoint < 0x80
        ? `_${codePoint.toString(16).padStart(2, '0')}`
        : `_u${codePoint.toString(16).padStart(6, '0')}`;
  }
  // The empty id: a lone `_` (no escape is `_` then the end), never the hidden `.json`.
  if (encoded === '') encoded = '_';
  if (encoded.length > MAX_ENCODED_LENGTH) {
    encoded = `${encoded.slice(0, 150)}~${sha256Hex(threadId).slice(0, 32)}`;
  }
  return `${encoded}.json`;
}
