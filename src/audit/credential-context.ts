import { minimumSecretLength, passphraseEnd, secretNameStrength } from './assigned-value.js';
import type { CredentialSpan } from './credential-kind.js';
import {
  ALNUM,
  BASE64,
  bitsOf,
  COMMA,
  DASH,
  DIGIT,
  DOT,
  EQUALS,
  HEX_LETTER,
  has,
  isMarkerAt,
  LETTER,
  LOWER,
  QUOTE,
  RecentPositions,
  runEnd,
  runUntil,
  SEMICOLON,
  SPACE,
  UNDERSCORE,
  UPPER,
  WORD,
} from './credential-text.js';
import { forEachSegment, type WordContext } from './credential-words.js';

const LOWER_HEX_LETTERS = 'abcdef';
const isLowerHexRun = (text: string, from: number, to: number): boolean => {
  for (let index = from; index < to; index++) {
    const code = text.charCodeAt(index);
    if (!has(code, DIGIT) && !LOWER_HEX_LETTERS.includes(text[index]!)) return false;
  }
  return true;
};

/**
 * Credentials with no prefix of their own, recognised by shape and context: a 40-character
 * AWS secret access key after an access key id or the word "aws"; 64 hex digits after
 * "private key"/"seed" (or `0x` + 64 hex after any "key"); a 32-character Twilio auth token
 * after an `AC…`/`SK…` id or "twilio"/"auth token". Context must come first, within a short
 * window, which keeps hashes, UUIDs and git SHAs elsewhere in the text untouched.
 *
 * Windows are measured in the redacted text: every credential this pass finds between a
 * context and a candidate counts as the marker that will replace it, so a redaction never
 * brings a candidate into range the next time (redacting twice changes nothing). That needs
 * the spans found so far, so both rules share one left-to-right scan.
 * Linear: each maximal run of either alphabet is read once.
 */
export function findContextualCredentials(
  text: string,
  found: CredentialSpan[],
  words: WordContext,
): void {
  // Without context a rule cannot fire, and its runs are not looked at (a Twilio id is
  // context too, and needs "AC" or "SK" somewhere in the text).
  const awsRule = words.aws.length > 0;
  const keyRules =
    words.privateKey.length > 0 ||
    words.key.length > 0 ||
    words.twilio.length > 0 ||
    text.includes('AC') ||
    text.includes('SK');
  if (!awsRule && !keyRules) return;
  const scan = new ContextScan(text, found, words);
  let base64End = 0;
  let wordEnd = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code >= 128) continue;
    if (awsRule && index >= base64End && has(code, BASE64)) {
      base64End = runEnd(text, index, BASE64);
      scan.awsCandidate(index, base64End);
    }
    if (keyRules && index >= wordEnd && has(code, WORD)) {
      wordEnd = runEnd(text, index, WORD);
      scan.wordCandidate(index, wordEnd);
    }
  }
}

/** The redacted length of each contextual kind: its marker, `[REDACTED:<kind>]`. */
const markerLength = (kind: CredentialSpan['kind']): number => kind.length + 11;

/** One contextual scan: its findings, and where each lands once they are redacted. */
class ContextScan {
  readonly #text: string;
  readonly #found: CredentialSpan[];
  readonly #aws: RecentPositions;
  readonly #privateKey: RecentPositions;
  readonly #key: RecentPositions;
  readonly #twilio: RecentPositions;
  readonly #twilioIdEnds: number[] = [];
  readonly #twilioIds: RecentPositions;
  /** Ends of the redactions closed so far, and the characters all of them up to it remove. */
  readonly #closedEnds: number[] = [];
  readonly #closedShrink: number[] = [];
  /** The last redaction, still open to a later overlapping finding (they merge into one). */
  #open: { start: number; end: number; kind: CredentialSpan['kind'] } | undefined;

  constructor(text: string, found: CredentialSpan[], words: WordContext) {
    this.#text = text;
    this.#found = found;
    this.#aws = new RecentPositions(words.aws);
    this.#privateKey = new RecentPositions(words.privateKey);
    this.#key = new RecentPositions(words.key);
    this.#twilio = new RecentPositions(words.twilio);
    this.#twilioIds = new RecentPositions(this.#twilioIdEnds);
  }

  awsCandidate(start: number, end: number): void {
    const text = this.#text;
    if (
      end - start === 40 &&
      !has(text.charCodeAt(start - 1), EQUALS | DASH | UNDERSCORE) &&
      !has(text.charCodeAt(end), EQUALS | DASH | UNDERSCORE) &&
      looksGenerated(text, start, end) &&
      this.#within(this.#aws, start, 160)
    ) {
      this.#push(start, end, 'aws_secret_access_key');
      this.#aws.record(end); // a redacted one is context for the next, as its marker will be
    }
  }

  wordCandidate(start: number, end: number): void {
    const text = this.#text;
    const length = end - start;
    if (length === 34) {
      const prefix = text.slice(start, start + 2);
      if ((prefix === 'AC' || prefix === 'SK') && isLowerHexRun(text, start + 2, end)) {
        this.#twilioIdEnds.push(end);
      }
    } else if (length === 32 && runEnd(text, start, ALNUM) === end) {
      if (
        (isLowerHexRun(text, start, end) || looksGenerated(text, start, end)) &&
        (this.#within(this.#twilioIds, start, 100) || this.#within(this.#twilio, start, 100))
      ) {
        this.#push(start, end, 'twilio_auth_token');
        this.#twilio.record(end);
      }
    } else if (length === 64) {
      const bits = bitsOf(text, start, end);
      if (
        runEnd(text, start, DIGIT | HEX_LETTER) === end &&
        bits & DIGIT &&
        bits & HEX_LETTER &&
        this.#within(this.#privateKey, start, 48)
      ) {
        this.#push(start, end, 'hex_private_key');
        this.#privateKey.record(end);
      }
    } else if (
      length === 66 &&
      text[start] === '0' &&
      (text[start + 1] === 'x' || text[start + 1] === 'X')
    ) {
      if (
        runEnd(text, start + 2, DIGIT | HEX_LETTER) === end &&
        (this.#within(this.#privateKey, start, 48) || this.#within(this.#key, start, 48))
      ) {
        this.#push(start, end, 'hex_private_key');
        this.#privateKey.record(end);
      }
    }
  }

  /** Did a context end at most `window` characters before `at`, counted in the redacted text? */
  #within(positions: RecentPositions, at: number, window: number): boolean {
    const last = positions.latest(at);
    return last >= 0 && this.#redactedAt(at) - this.#redactedAt(last) <= window;
  }

  /** Where `position` (outside every finding) will be once the findings before it are redacted. */
  #redactedAt(position: number): number {
    if (this.#open && this.#open.end <= position) this.#close();
    // The last closed redaction ending at or before `position` (binary search).
    let low = 0;
    let high = this.#closedEnds.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.#closedEnds[middle]! <= position) low = middle + 1;
      else high = middle;
    }
    return position - (low === 0 ? 0 : this.#closedShrink[low - 1]!);
  }

  // Mirrors how redactCredentials merges overlapping findings (the union, under the kind of
  // the earliest start; the longer one on a tie), so that the shrink counted is the real one.
  #push(start: number, end: number, kind: CredentialSpan['kind']): void {
    this.#found.push({ start, end, kind, rank: 2 });
    const open = this.#open;
    if (open && start < open.end) {
      const longerAtSameStart = start === open.start && end > open.end;
      this.#open = {
        start: open.start,
        end: Math.max(open.end, end),
        kind: longerAtSameStart ? kind : open.kind,
      };
      return;
    }
    if (open) this.#close();
    this.#open = { start, end, kind };
  }

  #close(): void {
    const open = this.#open!;
    const before = this.#closedShrink.at(-1) ?? 0;
    this.#closedEnds.push(open.end);
    this.#closedShrink.push(before + (open.end - open.start) - markerLength(open.kind));
    this.#open = undefined;
  }
}

// Upper and lower case and a digit or symbol: true of generated keys, false of words, git
// SHAs and hex hashes (one case only).
function looksGenerated(text: string, from: number, to: number): boolean {
  const bits = bitsOf(text, from, to);
  return (bits & UPPER) !== 0 && (bits & LOWER) !== 0 && (bits & ~LETTER) !== 0;
}

// Identifier words that name a secret (`DB_PASSWORD`, `clientSecret`, `x-api-key`,
// `TWILIO_AUTH_TOKEN`) — whole words, so `tokenizer` and `max_tokens` are not secrets.
const SECRET_WORDS = new Set([
  'password',
  'passwd',
  'pwd',
  'pass',
  'passphrase',
  'secret',
  'secrets',
  'token',
  'apikey',
  'credential',
  'credentials',
  'privatekey',
  'secretkey',
  'accesskey',
]);
const KEY_QUALIFIERS = new Set([
  'api',
  'access',
  'secret',
  'private',
  'auth',
  'signing',
  'encryption',
  'master',
  'client',
  'account',
  'session',
  'shared',
]);
const IDENTIFIER = WORD | DASH | DOT;

function namesSecret(text: string, start: number, end: number): boolean {
  let previous = '';
  let named = false;
  let index = start;
  while (index < end && !named) {
    if (!has(text.charCodeAt(index), LETTER)) {
      index++;
      continue;
    }
    const wordEnd = runEnd(text, index, LETTER);
    forEachSegment(text, index, wordEnd, (from, to) => {
      const segment = text.slice(from, to).toLowerCase();
      if (SECRET_WORDS.has(segment) || (segment === 'key' && KEY_QUALIFIERS.has(previous))) {
        named = true;
      }
      previous = segment;
    });
    index = wordEnd;
  }
  return named;
}

const skipBlanks = (text: string, from: number): number => {
  let index = from;
  while (text.charCodeAt(index) === 32 || text.charCodeAt(index) === 9) index++;
  return index;
};
// An optional quote, JSON-escaped or not.
const skipQuote = (text: string, from: number): number => {
  let index = from;
  if (text.charCodeAt(index) === 92) index++;
  return has(text.charCodeAt(index), QUOTE) ? index + 1 : from;
};

/**
 * `password=…`, `"clientSecret": "…"`, `X-Api-Key: …`, `export DB_PASSWORD=…`: the value
 * (8+ characters, 4+ after an unambiguous name, a whole passphrase after a password name:
 * assigned-value.ts; not already a marker or a mask) of an identifier that names a secret.
 * Linear: identifiers are maximal runs read once, and scanning resumes after each value.
 */
export function findAssignedSecrets(
  text: string,
  found: CredentialSpan[],
  /** Spans other rules found, sorted by start: a value stops where one starts, as it will at its marker. */
  others: readonly CredentialSpan[] = [],
): void {
  let index = 0;
  let nextOther = 0;
  while (index < text.length) {
    if (!has(text.charCodeAt(index), IDENTIFIER)) {
      index++;
      continue;
    }
    while (nextOther < others.length && others[nextOther]!.end <= index) nextOther++;
    const other = others[nextOther];
    if (other && other.start <= index) {
      index = other.end; // inside another rule's credential: its marker will be there
      continue;
    }
    const end = Math.min(runEnd(text, index, IDENTIFIER), other?.start ?? text.length);
    let cursor = skipBlanks(text, skipQuote(text, end));
    const operator = text.charCodeAt(cursor);
    if ((operator !== 58 && operator !== 61) || !namesSecret(text, index, end)) {
      index = end;
      continue;
    }
    cursor++;
    if (text.charCodeAt(cursor) === 61 || text.charCodeAt(cursor) === 62) cursor++; // := =>
    const unquoted = skipBlanks(text, cursor);
    cursor = skipQuote(text, unquoted);
    const quote = cursor > unquoted ? text.charCodeAt(cursor - 1) : 0;
    if (isMarkerAt(text, cursor)) {
      index = cursor + 1;
      continue;
    }
    let following = nextOther;
    while (following < others.length && others[following]!.start < cursor) following++;
    let valueEnd = Math.min(
      runUntil(text, cursor, SPACE | QUOTE | COMMA | SEMICOLON),
      others[following]?.start ?? text.length,
    );
    // Closing parentheses the value never opened end it (`f(password=s3cret-value)`): they
    // are the call's, not the secret's. Reads only the run just read.
    if (!text.slice(cursor, valueEnd).includes('(')) {
      while (valueEnd > cursor && text.charCodeAt(valueEnd - 1) === 41) valueEnd--;
    }
    const strength = secretNameStrength(text, index, end);
    const blank = text.charCodeAt(valueEnd);
    if (strength === 'password' && (blank === 32 || blank === 9)) {
      valueEnd = passphraseEnd(
        text,
        cursor,
        valueEnd,
        quote,
        others[following]?.start ?? text.length,
      );
    }
    if (
      valueEnd - cursor >= minimumSecretLength(strength, text.slice(cursor, valueEnd)) &&
      !isMask(text, cursor, valueEnd) &&
      !isReference(text.slice(cursor, valueEnd), text.slice(index, end))
    ) {
      // `AWS_SECRET_ACCESS_KEY=…` keeps its specific kind.
      const aws = valueEnd - cursor === 40 && /aws/i.test(text.slice(index, end));
      found.push({
        start: cursor,
        end: valueEnd,
        kind: aws ? 'aws_secret_access_key' : 'assigned_secret',
        rank: 5,
      });
    }
    index = Math.max(end, valueEnd);
  }
}

// Code that names where a secret comes from rather than the secret: `getToken()`,
// `process.env.X`, `config.stripeSecret`, `${VAR}`, `$VAR`, `%VAR%`, and a
// parameter passed on as itself (`password=password`).
const REFERENCE_ROOTS =
  /^(?:process\.env|os\.environ|env|config|settings|self|this|ctx|context|secrets|vault|request|req|options|opts|props|params|args|window|import\.meta)\./;
function isReference(value: string, name: string): boolean {
  return (
    value.includes('(') ||
    value.startsWith('$') ||
    value.startsWith('%') ||
    REFERENCE_ROOTS.test(value) ||
    value === name
  );
}

// "********", "xxxxxxxx", "........": already masked.
function isMask(text: string, from: number, to: number): boolean {
  for (let index = from; index < to; index++) {
    const char = text[index];
    if (char !== '*' && char !== 'x' && char !== 'X' && char !== '.') return false;
  }
  return true;
}
