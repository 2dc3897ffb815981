import { boundary, push, type Scan } from './credential-scan.js';
import {
  ALNUM,
  BACKSLASH,
  BASE64,
  COLON,
  COMMA,
  DASH,
  DIGIT,
  DOT,
  EQUALS,
  HEX_LETTER,
  runEnd,
  SPACE,
  startsWithFolded,
  UPPER,
} from './credential-text.js';

// "-----BEGIN … PRIVATE KEY-----" up to its END line, or to the end of the base64 body when
// the END line is missing (a truncated key is still a key). END lines are searched with
// indexOf and remembered per label, so many BEGINs without an END cost one search in all.
const PEM_BODY = BASE64 | SPACE | EQUALS | COLON | DASH | DOT | BACKSLASH | COMMA;
export function pem(scan: Scan, at: number): void {
  const { text } = scan;
  if (!text.startsWith('-----BEGIN ', at)) return;
  const labelStart = at + 11;
  const labelEnd = runEnd(text, labelStart, UPPER | DIGIT | SPACE);
  const label = text.slice(labelStart, labelEnd);
  if (
    labelEnd - labelStart > 64 ||
    !text.startsWith('-----', labelEnd) ||
    !(label.endsWith('PRIVATE KEY') || label.endsWith('PRIVATE KEY BLOCK'))
  ) {
    return;
  }
  const headerEnd = labelEnd + 5;
  const marker = `-----END ${label}-----`;
  let known = scan.pemEnds.get(label);
  if (!known || (known.at !== -1 && known.at < headerEnd)) {
    known = { at: text.indexOf(marker, headerEnd) };
    scan.pemEnds.set(label, known);
  }
  if (known.at !== -1) {
    push(scan, at, known.at + marker.length, 'pem_private_key');
    return;
  }
  if (headerEnd < scan.pemBody.start || headerEnd > scan.pemBody.end) {
    scan.pemBody = { start: headerEnd, end: runEnd(text, headerEnd, PEM_BODY) };
  }
  push(scan, at, scan.pemBody.end, 'pem_private_key');
}

// PuTTY .ppk: "Private-Lines: N", N lines of base64, then "Private-MAC: <hex>".
export function putty(scan: Scan, at: number): void {
  const { text } = scan;
  if (!startsWithFolded(text, 'private-lines:', at) || !boundary(scan, at, ALNUM)) return;
  let index = skipBlanks(text, at + 14);
  const digits = runEnd(text, index, DIGIT);
  if (digits === index || digits - index > 4) return;
  const lines = Number(text.slice(index, digits));
  index = digits;
  for (let line = 0; line < lines; line++) {
    const start = newline(text, index);
    if (start === -1) break;
    const end = runEnd(text, start, BASE64 | EQUALS);
    if (end === start) break;
    index = end;
  }
  const next = newline(text, index);
  for (const trailer of ['Private-MAC:', 'Private-Hash:']) {
    if (next !== -1 && text.startsWith(trailer, next)) {
      index = runEnd(text, skipBlanks(text, next + trailer.length), DIGIT | HEX_LETTER);
    }
  }
  push(scan, at, index, 'putty_private_key');
}

function skipBlanks(text: string, from: number): number {
  let index = from;
  while (text.charCodeAt(index) === 32 || text.charCodeAt(index) === 9) index++;
  return index;
}

// The start of the next line: after optional blanks, a newline or a JSON-escaped one.
function newline(text: string, from: number): number {
  let next = skipBlanks(text, from);
  if (text.charCodeAt(next) === 13) next++;
  if (text.charCodeAt(next) === 10) return next + 1;
  if (text.startsWith('\\r', next)) next += 2;
  return text.startsWith('\\n', next) ? next + 2 : -1;
}
