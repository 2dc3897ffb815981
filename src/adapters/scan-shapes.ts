import { HOST_SHAPE, IMAGE_SHAPE, SECRET_VARIABLE_SHAPE } from './poisoning-needles.js';
import { type Folded, isAlnum } from './scan-folding.js';

/** Where a needle occurs in a folded text: `start[i]` to `end[i]` (exclusive), in order. */
export interface Occurrences {
  start: number[];
  end: number[];
}

/** True when `needle` names a shape ({@link shapeOccurrences}) rather than a string. */
export const isShape = (needle: string): boolean =>
  needle === HOST_SHAPE || needle === IMAGE_SHAPE || needle === SECRET_VARIABLE_SHAPE;

/**
 * Every occurrence of a shape in `folded` (the folding of `text`, punctuation kept):
 *
 * - `{host}`: a host name without its scheme, as where something goes (after `to`, `at`,
 *   `via`, `into`: `to collect.evil.example/log`) — two labels or more without `_`, the last
 *   of letters only, followed by a path, or of three labels or more, or ending in a common
 *   top-level domain (`evil.com`) — or an IPv4 address;
 * - `{image}`: a markdown image `![alt](…)`, up to its closing parenthesis;
 * - `{secret-variable}`: a reference to an environment variable (`$NAME`, `${NAME}`,
 *   `$env:NAME`, `%NAME%`) whose name ends in a secret's word (`KEY`, `TOKEN`, `SECRET`,
 *   `PASSWORD`, `CREDENTIALS`: `$OPENAI_API_KEY`, `$GITHUB_TOKEN`; not `$SSH_KEY_ID`), other
 *   than a placeholder after `/` or `:` and the credential of `Bearer $API_TOKEN`.
 *
 * A folded word runs across a dropped separator only where the text has no blank there (the
 * `_` of `OPENAI_API_KEY`, the `-` of `my-host`). Linear: each parse starts where the one
 * before ended and reads a bounded window or the units it consumes.
 */
export function shapeOccurrences(shape: string, folded: Folded, text: string): Occurrences {
  if (shape === HOST_SHAPE) return walk(folded, text, hostAt);
  if (shape === IMAGE_SHAPE) return walk(folded, text, imageAt, '!');
  return walk(folded, text, secretVariableAt, '$', '%');
}

/** Whether the markdown image `[start, end)` has a URL carrying data: a query or `{…}`. */
export function imageCarriesData(folded: Folded, start: number, end: number): boolean {
  const url = folded.text.slice(indexWithin(folded.text, '](', start, end) + 2, end);
  return url.includes('?') || url.includes('{');
}

// The first index of `needle` in `units[from, to)`, or -1: `indexOf` bounded to a window.
function indexWithin(units: string, needle: string, from: number, to: number): number {
  const at = units.slice(from, to).indexOf(needle);
  return at === -1 ? -1 : from + at;
}

// A parse at `at` returns the end of a match there, 0 for none (the walk tries `at + 1`), or
// minus the index to resume at (a word read and found to be no match is not read again).
type Parse = (folded: Folded, text: string, at: number) => number;

// Tries `parse` at each index — or, given `initials` (the units a match can start with), at
// each index holding one of them; a match [at, end) is recorded and the walk resumes at its end.
function walk(folded: Folded, text: string, parse: Parse, ...initials: string[]): Occurrences {
  const found: Occurrences = { start: [], end: [] };
  const units = folded.text;
  // The next index from `from` holding an initial, or the length: each initial's next
  // occurrence is kept and looked for again only once passed, so the skips stay linear.
  const nextAt = initials.map(() => -1);
  const skipTo = (from: number): number => {
    if (initials.length === 0) return from;
    let least = units.length;
    for (let which = 0; which < initials.length; which++) {
      if (nextAt[which]! < from && nextAt[which] !== units.length) {
        const hit = units.indexOf(initials[which]!, from);
        nextAt[which] = hit === -1 ? units.length : hit;
      }
      least = Math.min(least, nextAt[which]!);
    }
    return least;
  };
  for (let at = skipTo(0); at < units.length; at = skipTo(at)) {
    const end = parse(folded, text, at);
    if (end > at) {
      found.start.push(at);
      found.end.push(end);
      at = end;
    } else {
      at = Math.max(at + 1, -end);
    }
  }
  return found;
}

// Whether folded units `index - 1` and `index` stand together in the text: no gap, or a gap
// left by a separator that is not a blank (`_`, `-`, `*`, a backtick, a hidden character);
// for a host name (`hostName`), not `_` either.
function joined(folded: Folded, text: string, index: number, hostName: boolean): boolean {
  if (folded.gap[index] === 0) return true;
  for (let at = folded.origin[index - 1]! + 1; at < folded.origin[index]!; at++) {
    const code = text.charCodeAt(at);
    if (code === 0x20 || (code >= 0x09 && code <= 0x0d) || code === 0xa0) return false;
    if (hostName && code === 0x5f) return false;
  }
  return true;
}

// The end of a run of letters and digits from `at` whose units stand together, at most `limit`.
function wordEnd(
  folded: Folded,
  text: string,
  at: number,
  limit: number,
  hostName = false,
): number {
  let end = at;
  const last = Math.min(folded.text.length, at + limit);
  while (
    end < last &&
    isAlnum(folded.text, end) &&
    (end === at || joined(folded, text, end, hostName))
  ) {
    end++;
  }
  return end;
}

// The folded word that ends where `end` is, after skipping up to three units of punctuation
// (`to: evil.com`, `` to `evil.com` ``), at most 12 units long; '' when there is none.
function wordBefore(folded: Folded, end: number): string {
  const units = folded.text;
  let to = end;
  for (let skipped = 0; to > 0 && !isAlnum(units, to - 1) && skipped < 3; skipped++) to--;
  let from = to;
  const joinsLeft = (index: number) =>
    index > 0 && isAlnum(units, index - 1) && (index === to || folded.gap[index] === 0);
  while (to - from < 12 && joinsLeft(from)) from--;
  return from < to && joinsLeft(from) ? '' : units.slice(from, to);
}

const COMMON_TOP_LEVEL = new Set(
  'com net org io ai dev app co xyz info biz me site online top cc tk ru cn de uk us ws gg ly gl link live click pw su cloud tech store pro'.split(
    ' ',
  ),
);

// `{host}` at `at` (a word start).
function hostAt(folded: Folded, text: string, at: number): number {
  const units = folded.text;
  if (!isAlnum(units, at)) return 0;
  if (at > 0 && folded.gap[at] === 0 && (isAlnum(units, at - 1) || units[at - 1] === '.')) return 0;
  let labels = 0;
  let digits = 0;
  let lastStart = at;
  let end = at;
  for (;;) {
    lastStart = end;
    end = wordEnd(folded, text, end, 64, true);
    labels++;
    if (allDigits(units, lastStart, end)) digits++;
    const next = end + 1;
    if (units[end] !== '.' || !isAlnum(units, next) || folded.gap[next] === 1 || labels >= 16) {
      break;
    }
    end = next;
  }
  const top = units.slice(lastStart, end);
  const letters = top.length >= 2 && top.length <= 24 && !anyDigit(top);
  const isHost =
    (labels === 4 && digits === 4) ||
    (labels >= 2 && letters && (units[end] === '/' || labels >= 3 || COMMON_TOP_LEVEL.has(top)));
  // Only as where something goes (`to evil.example`), not an example value or a dotted name.
  return isHost && DESTINATIONS.has(wordBefore(folded, at)) ? end : -end;
}

const DESTINATIONS = new Set(['to', 'at', 'via', 'into', 'onto', 'toward', 'towards']);

const allDigits = (units: string, from: number, to: number): boolean => {
  for (let index = from; index < to; index++) {
    const code = units.charCodeAt(index);
    if (code < 48 || code > 57) return false;
  }
  return true;
};
const anyDigit = (units: string): boolean => {
  for (let index = 0; index < units.length; index++) {
    const code = units.charCodeAt(index);
    if (code >= 48 && code <= 57) return true;
  }
  return false;
};

// `{image}` at `at`: `![`, up to 200 units of alt text, `](`, and the URL up to `)` (or 512).
function imageAt(folded: Folded, _text: string, at: number): number {
  const units = folded.text;
  if (units[at] !== '!' || units[at + 1] !== '[') return 0;
  const close = indexWithin(units, '](', at + 2, at + 202);
  if (close === -1) return 0;
  const end = indexWithin(units, ')', close + 2, close + 514);
  return end === -1 ? Math.min(units.length, close + 514) : end + 1;
}

const AUTH_SCHEMES = new Set(['bearer', 'basic']);
const SECRET_WORDS = new Set(['key', 'token', 'secret', 'password', 'passwd', 'credentials']);
const SECRET_ENDINGS = ['apikey', 'secretkey', 'accesskey', 'privatekey', 'token', 'secret'];

// `{secret-variable}` at `at`: `$NAME`, `${NAME}`, `$env:NAME` or `%NAME%`.
function secretVariableAt(folded: Folded, text: string, at: number): number {
  const units = folded.text;
  const sigil = units[at];
  if (sigil !== '$' && sigil !== '%') return 0;
  let start = at + 1;
  if (sigil === '$' && units[start] === '{') start++;
  else if (sigil === '$' && units.startsWith('env:', start)) start += 4;
  const code = units.charCodeAt(start);
  if (code < 97 || code > 122) return 0;
  // A placeholder in a path or a format (`/keys/$ACCESS_KEY`, `$user:$token`), or the
  // credential of a documented Authorization header (`Bearer $API_TOKEN`), is not a read.
  const before = units[at - 1];
  if (before === '/' || before === ':' || AUTH_SCHEMES.has(wordBefore(folded, at))) return -start;
  const end = wordEnd(folded, text, start, 64);
  if (sigil === '%' && units[end] !== '%') return 0;
  // The name's last word (after its last `_`), and the name as one word (`APIKEY`).
  let last = start;
  for (let index = start + 1; index < end; index++) if (folded.gap[index] === 1) last = index;
  const name = units.slice(start, end);
  const secret =
    SECRET_WORDS.has(units.slice(last, end)) ||
    SECRET_ENDINGS.some((ending) => name.endsWith(ending));
  return secret ? end + (sigil === '%' || units[end] === '}' ? 1 : 0) : -end;
}
