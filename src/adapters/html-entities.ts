/**
 * Named character references a model reads as the character, by lower-cased name. Not the
 * whole HTML table (2,000+ names): the markup and punctuation characters an instruction needs
 * (`<`, `>`, `/`, `:` …) and the spaces that separate its words. Case is ignored (`&LT;`), which
 * over-approximates HTML on purpose: this feeds a scanner, not a renderer.
 */
const NAMED: ReadonlyMap<string, string> = new Map([
  ['lt', '<'],
  ['gt', '>'],
  ['amp', '&'],
  ['quot', '"'],
  ['apos', "'"],
  ['nbsp', '\u00a0'],
  ['tab', '\t'],
  ['newline', '\n'],
  ['sol', '/'],
  ['bsol', '\\'],
  ['excl', '!'],
  ['quest', '?'],
  ['num', '#'],
  ['dollar', '$'],
  ['percnt', '%'],
  ['ast', '*'],
  ['midast', '*'],
  ['plus', '+'],
  ['equals', '='],
  ['commat', '@'],
  ['lowbar', '_'],
  ['grave', '`'],
  ['hat', '^'],
  ['tilde', '~'],
  ['colon', ':'],
  ['semi', ';'],
  ['comma', ','],
  ['period', '.'],
  ['lpar', '('],
  ['rpar', ')'],
  ['lsqb', '['],
  ['lbrack', '['],
  ['rsqb', ']'],
  ['rbrack', ']'],
  ['lcub', '{'],
  ['lbrace', '{'],
  ['rcub', '}'],
  ['rbrace', '}'],
  ['verbar', '|'],
  ['vert', '|'],
  ['hyphen', '\u2010'],
  ['dash', '\u2010'],
]);

/** Names HTML also decodes without their `;` (`&ltIMPORTANT&gt`), longest first. */
const LEGACY = ['quot', 'amp', 'lt', 'gt'];

/** Longest name looked at after an `&` (the longest in {@link NAMED} is shorter). */
const MAX_NAME = 16;

/**
 * One pass of HTML character-reference decoding: `&#60;`, `&#x3C;` (any number of leading
 * zeros, `;` optional as browsers allow), the names of {@link NAMED} with their `;`, and
 * `&lt`, `&gt`, `&amp`, `&quot` without it. A number that is no Unicode scalar value becomes
 * U+FFFD; anything else after an `&` stays as written. Decoding never lengthens the text.
 *
 * Linear: one left-to-right walk, at most {@link MAX_NAME} characters read past each `&` for a
 * name and every digit read once.
 *
 * @example decodeHtmlEntities('&lt;IMPORTANT&#x3e;') // '<IMPORTANT>'
 */
export function decodeHtmlEntities(text: string): string {
  let at = text.indexOf('&');
  if (at === -1) return text;
  let result = '';
  let from = 0;
  while (at !== -1) {
    const reference = referenceAt(text, at);
    if (reference) {
      result += text.slice(from, at) + reference.value;
      from = reference.end;
    }
    at = text.indexOf('&', reference ? reference.end : at + 1);
  }
  return result + text.slice(from);
}

/**
 * The text as a model may read it: {@link decodeHtmlEntities} repeated while it changes
 * something, at most `rounds` times, so `&amp;lt;` (an escaped escape) is seen as `<` too.
 */
export function decodeHtmlEntitiesDeep(text: string, rounds = 4): string {
  let current = text;
  for (let round = 0; round < rounds; round++) {
    const next = decodeHtmlEntities(current);
    if (next === current) break;
    current = next;
  }
  return current;
}

function referenceAt(text: string, at: number): { value: string; end: number } | undefined {
  if (text.charCodeAt(at + 1) === 0x23 /* # */) return numericAt(text, at + 2);
  let end = at + 1;
  while (end < text.length && end - at <= MAX_NAME && isAsciiAlphanumeric(text.charCodeAt(end))) {
    end++;
  }
  const name = text.slice(at + 1, end).toLowerCase();
  if (text[end] === ';') {
    const value = NAMED.get(name);
    if (value !== undefined) return { value, end: end + 1 };
  }
  const legacy = LEGACY.find((candidate) => name.startsWith(candidate));
  return legacy ? { value: NAMED.get(legacy)!, end: at + 1 + legacy.length } : undefined;
}

function numericAt(text: string, start: number): { value: string; end: number } | undefined {
  const hex = text[start] === 'x' || text[start] === 'X';
  let index = hex ? start + 1 : start;
  const digitsFrom = index;
  let value = 0;
  for (; index < text.length; index++) {
    const digit = digitValue(text.charCodeAt(index), hex);
    if (digit < 0) break;
    // Past the largest code point the value is invalid anyway; stop growing it.
    if (value <= 0x10ffff) value = value * (hex ? 16 : 10) + digit;
  }
  if (index === digitsFrom) return undefined;
  const end = text[index] === ';' ? index + 1 : index;
  const scalar = value > 0 && value <= 0x10ffff && (value < 0xd800 || value > 0xdfff);
  return { value: scalar ? String.fromCodePoint(value) : '\ufffd', end };
}

function digitValue(code: number, hex: boolean): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (!hex) return -1;
  const lower = code | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

function isAsciiAlphanumeric(code: number): boolean {
  const lower = code | 0x20;
  return (code >= 0x30 && code <= 0x39) || (lower >= 0x61 && lower <= 0x7a);
}
