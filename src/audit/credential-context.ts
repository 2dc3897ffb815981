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
 * Linear: each pass reads every maximal run of its alphabet once.
 */
export function findContextualCredentials(
  text: string,
  found: CredentialSpan[],
  words: WordContext,
): void {
  const aws = new RecentPositions(words.aws);
  let index = 0;
  while (index < text.length) {
    if (!has(text.charCodeAt(index), BASE64)) {
      index++;
      continue;
    }
    const end = runEnd(text, index, BASE64);
    if (
      end - index === 40 &&
      !has(text.charCodeAt(index - 1), EQUALS | DASH | UNDERSCORE) &&
      !has(text.charCodeAt(end), EQUALS | DASH | UNDERSCORE) &&
      looksGenerated(text, index, end) &&
      aws.within(index, 160)
    ) {
      found.push({ start: index, end, kind: 'aws_secret_access_key', rank: 2 });
      aws.record(end); // a redacted one is context for the next, as its marker will be
    }
    index = end;
  }

  const privateKey = new RecentPositions(words.privateKey);
  const key = new RecentPositions(words.key);
  const twilio = new RecentPositions(words.twilio);
  const twilioIdEnds: number[] = [];
  const twilioIds = new RecentPositions(twilioIdEnds);
  index = 0;
  while (index < text.length) {
    if (!has(text.charCodeAt(index), WORD)) {
      index++;
      continue;
    }
    const end = runEnd(text, index, WORD);
    const length = end - index;
    if (length === 34) {
      const prefix = text.slice(index, index + 2);
      if ((prefix === 'AC' || prefix === 'SK') && isLowerHexRun(text, index + 2, end)) {
        twilioIdEnds.push(end);
      }
    } else if (length === 32 && runEnd(text, index, ALNUM) === end) {
      if (
        (isLowerHexRun(text, index, end) || looksGenerated(text, index, end)) &&
        (twilioIds.within(index, 100) || twilio.within(index, 100))
      ) {
        found.push({ start: index, end, kind: 'twilio_auth_token', rank: 2 });
        twilio.record(end);
      }
    } else if (length === 64) {
      const bits = bitsOf(text, index, end);
      if (
        runEnd(text, index, DIGIT | HEX_LETTER) === end &&
        bits & DIGIT &&
        bits & HEX_LETTER &&
        privateKey.within(index, 48)
      ) {
        found.push({ start: index, end, kind: 'hex_private_key', rank: 2 });
        privateKey.record(end);
      }
    } else if (
      length === 66 &&
      text[index] === '0' &&
      (text[index + 1] === 'x' || text[index + 1] === 'X')
    ) {
      if (
        runEnd(text, index + 2, DIGIT | HEX_LETTER) === end &&
        (privateKey.within(index, 48) || key.within(index, 48))
      ) {
        found.push({ start: index, end, kind: 'hex_private_key', rank: 2 });
        privateKey.record(end);
      }
    }
    index = end;
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
 * (8+ characters, not already a marker or a mask) of an identifier that names a secret.
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
    cursor = skipQuote(text, skipBlanks(text, cursor));
    if (isMarkerAt(text, cursor)) {
      index = cursor + 1;
      continue;
    }
    let following = nextOther;
    while (following < others.length && others[following]!.start < cursor) following++;
    const valueEnd = Math.min(
      runUntil(text, cursor, SPACE | QUOTE | COMMA | SEMICOLON),
      others[following]?.start ?? text.length,
    );
    if (
      valueEnd - cursor >= 8 &&
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
// `password)`, `process.env.X`, `config.stripeSecret`, `${VAR}`, `$VAR`, `%VAR%`, and a
// parameter passed on as itself (`password=password`).
const REFERENCE_ROOTS =
  /^(?:process\.env|os\.environ|env|config|settings|self|this|ctx|context|secrets|vault|request|req|options|opts|props|params|args|window|import\.meta)\./;
function isReference(value: string, name: string): boolean {
  return (
    value.includes('(') ||
    value.endsWith(')') ||
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
