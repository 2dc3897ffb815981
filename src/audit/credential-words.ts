import { wordlist } from '@scure/bip39/wordlists/english.js';
import type { CredentialSpan } from './credential-kind.js';
import {
  BACKSLASH,
  COLON,
  COMMA,
  DASH,
  DIGIT,
  DOT,
  has,
  LETTER,
  LOWER,
  PAREN,
  runEnd,
  SEMICOLON,
  SPACE,
  UPPER,
} from './credential-text.js';

// Words are looked up by a hash of their folded letters, so that checking a word of the text
// allocates nothing; a hit is then compared letter by letter.
function foldedHash(text: string, start: number, end: number): number {
  let hash = 0x811c9dc5;
  for (let index = start; index < end; index++) {
    hash = Math.imul(hash ^ (text.charCodeAt(index) | 32), 0x01000193);
  }
  return hash >>> 0;
}
function wordTable(words: Iterable<string>): Map<number, string> {
  const table = new Map<number, string>();
  for (const word of words) table.set(foldedHash(word, 0, word.length), word);
  return table;
}
function lookup(
  table: Map<number, string>,
  text: string,
  start: number,
  end: number,
  hash = foldedHash(text, start, end),
): string | undefined {
  const word = table.get(hash);
  if (word === undefined || word.length !== end - start) return undefined;
  for (let offset = 0; offset < word.length; offset++) {
    if ((text.charCodeAt(start + offset) | 32) !== word.charCodeAt(offset)) return undefined;
  }
  return word;
}
const BIP39 = wordTable(wordlist);
const MNEMONIC_MIN_WORDS = 12;
// "private key", "signing_key", "walletKey": a key word after one of these is a private key.
const PRIVATE_KEY_QUALIFIERS = new Set([
  'private',
  'priv',
  'secret',
  'signing',
  'wallet',
  'account',
  'master',
]);
const PRIVATE_KEY_WORDS = new Set(['privkey', 'privatekey', 'secretkey', 'seed', 'mnemonic']);
// Every segment any context rule looks at; other words cost one length check and a lookup.
const CONTEXT_WORDS = new Set([
  'aws',
  'access',
  'twilio',
  'auth',
  'token',
  'key',
  'public',
  ...PRIVATE_KEY_QUALIFIERS,
  ...PRIVATE_KEY_WORDS,
]);

const CONTEXT_TABLE = wordTable(CONTEXT_WORDS);
// One bit per first letter of a context word: most words of ordinary text skip the lookup.
const CONTEXT_INITIALS = [...CONTEXT_WORDS].reduce(
  (bits, word) => bits | (1 << (word.charCodeAt(0) - 97)),
  0,
);
const isContextInitial = (code: number): boolean => {
  const letter = (code | 32) - 97;
  return letter >= 0 && letter < 26 && (CONTEXT_INITIALS & (1 << letter)) !== 0;
};

/**
 * Where context ends, for the rules that need it, in increasing order. A redaction marker of a
 * contextual kind is context for more of its kind (see `redactCredentials` for why).
 */
export interface WordContext {
  /** "aws secret", "secret access" (`AWS_SECRET_ACCESS_KEY`, `SecretAccessKey`). */
  aws: number[];
  /** A private-key word: "private key", `signing_key`, "seed", `privKey`. */
  privateKey: number[];
  /** "key" not preceded by "public". */
  key: number[];
  /** "auth token" or "secret" within 40 characters after "twilio". */
  twilio: number[];
}

const MARKER_CONTEXT: Readonly<Record<string, keyof WordContext>> = {
  aws_access_key_id: 'aws',
  aws_secret_access_key: 'aws',
  twilio_auth_token: 'twilio',
  hex_private_key: 'privateKey',
};

/** Calls `visit` for each camel-case part of `text[start, end)`: `APIKey` → `API`, `Key`. */
export function forEachSegment(
  text: string,
  start: number,
  end: number,
  visit: (from: number, to: number) => void,
): void {
  let from = start;
  for (let index = start + 1; index < end; index++) {
    const current = text.charCodeAt(index);
    if (!has(current, UPPER)) continue;
    // fooBar → foo|Bar; APIKey → API|Key (an upper-case run ends before its last letter).
    if (
      has(text.charCodeAt(index - 1), LOWER) ||
      (index + 1 < end && has(text.charCodeAt(index + 1), LOWER))
    ) {
      visit(from, index);
      from = index;
    }
  }
  visit(from, end);
}

// Between two words of a written-down mnemonic: spaces, newlines (also JSON-escaped ones),
// commas and list numbering ("1. abandon 2. ability").
const MNEMONIC_GAP = SPACE | DIGIT | COMMA | DOT | PAREN | COLON | SEMICOLON | DASH;

/**
 * One pass over the words of `text` (runs of ASCII letters; redaction markers skipped): records
 * the key words other rules need as context, and pushes a `bip39_mnemonic` span for every run
 * of at least 12 BIP-39 English words. Linear: each character is visited a bounded number of
 * times (the look for a marker's closing bracket never re-reads what an earlier look read).
 */
export function scanWords(
  text: string,
  found: CredentialSpan[],
  skip: readonly CredentialSpan[] = [],
): WordContext {
  const scan = new WordScan(text, found);
  const { context } = scan;
  let index = 0;
  let nextSkip = 0;
  let unclosedUntil = -1;
  // The first span found by another pass that ends after `index` (spans are sorted and do
  // not overlap); looked up again only once `index` reaches its start.
  let skipped = skip[0];
  let skipFrom = skipped?.start ?? Number.POSITIVE_INFINITY;
  while (index < text.length) {
    const code = text.charCodeAt(index);
    if (index >= skipFrom) {
      while (nextSkip < skip.length && skip[nextSkip]!.end <= index) nextSkip++;
      skipped = skip[nextSkip];
      skipFrom = skipped?.start ?? Number.POSITIVE_INFINITY;
    }
    if (skipped && skipped.start <= index) {
      // A credential found by another pass: treated exactly like the marker it will become.
      const kind = MARKER_CONTEXT[skipped.kind];
      if (kind) context[kind].push(skipped.end);
      scan.endStreak();
      scan.previous = '';
      scan.gapOk = false;
      index = skipped.end;
      continue;
    }
    if (code === 91 && text.startsWith('[REDACTED', index)) {
      // "[REDACTED:aws_access_key_id]" must not count as context, or redacting twice would
      // differ. The look for "]" is bounded and resumes where an earlier failed look stopped.
      let close = Math.max(index + 1, unclosedUntil);
      while (close < text.length && close - index < 80 && text.charCodeAt(close) !== 93) close++;
      if (text.charCodeAt(close) === 93) {
        const kind = MARKER_CONTEXT[text.slice(index + 10, close)];
        if (kind) context[kind].push(close + 1);
        scan.endStreak();
        scan.previous = '';
        index = close + 1;
      } else {
        unclosedUntil = close;
        index++;
      }
      scan.gapOk = false;
      continue;
    }
    if (code === 92 && has(text.charCodeAt(index + 1), LOWER)) {
      const escaped = text[index + 1];
      if (escaped === 'n' || escaped === 'r' || escaped === 't') {
        index += 2; // an escaped newline or tab separates words like a real one
        scan.gapLength += 2;
        continue;
      }
    }
    if (!has(code, LETTER)) {
      if (!has(code, MNEMONIC_GAP | BACKSLASH)) scan.gapOk = false;
      scan.gapLength++;
      index++;
      continue;
    }
    // A word ends where a found credential starts, as it will at the marker that replaces it.
    const end = Math.min(runEnd(text, index, LETTER), skipped?.start ?? text.length);
    scan.word(index, end);
    index = end;
  }
  scan.endStreak();
  return context;
}

/**
 * The state of one {@link scanWords} pass. A class rather than closures, so a call (the audit
 * log scrubs many short strings) allocates one object.
 */
class WordScan {
  readonly text: string;
  readonly found: CredentialSpan[];
  readonly context: WordContext = { aws: [], privateKey: [], key: [], twilio: [] };
  previous = '';
  previousEnd = -10;
  streakStart = -1;
  streakEnd = -1;
  streakWords = 0;
  gapOk = true;
  gapLength = 0;
  twilioEnd = -1000;

  constructor(text: string, found: CredentialSpan[]) {
    this.text = text;
    this.found = found;
  }

  endStreak(): void {
    if (this.streakWords >= MNEMONIC_MIN_WORDS) {
      this.found.push({
        start: this.streakStart,
        end: this.streakEnd,
        kind: 'bip39_mnemonic',
        rank: 2,
      });
    }
    this.streakWords = 0;
  }

  /** A word of letters, `text[index, end)`: a mnemonic word, and its segments' context. */
  word(index: number, end: number): void {
    const { text } = this;
    const length = end - index;
    // A word with no capital after its first letter is one segment, and its folded hash
    // serves both word tables.
    let oneSegment = true;
    for (let inner = index + 1; inner < end && oneSegment; inner++) {
      if (has(text.charCodeAt(inner), UPPER)) oneSegment = false;
    }
    const hash = oneSegment && length >= 3 && length <= 10 ? foldedHash(text, index, end) : 0;
    // Mnemonics are written in lower case (the wordlist is); a capitalised first word is too.
    if (
      length >= 3 &&
      length <= 8 &&
      oneSegment &&
      lookup(BIP39, text, index, end, hash) !== undefined
    ) {
      if (this.streakWords > 0 && this.gapOk && this.gapLength <= 12) {
        this.streakWords++;
      } else {
        this.endStreak();
        this.streakStart = index;
        this.streakWords = 1;
      }
      this.streakEnd = end;
    } else {
      this.endStreak();
    }
    if (length < 3) {
      // No segment this short is a context word: what visiting its segments would do.
      this.previous = '';
      this.previousEnd = end;
    } else if (oneSegment) {
      this.segment(index, end, length <= 10 ? hash : undefined);
    } else {
      forEachSegment(text, index, end, (from, to) => this.segment(from, to));
    }
    this.gapOk = true;
    this.gapLength = 0;
  }

  segment(from: number, to: number, hash?: number): void {
    const { text, context } = this;
    const length = to - from;
    const segment =
      length < 3 || length > 10 || !isContextInitial(text.charCodeAt(from))
        ? undefined
        : lookup(CONTEXT_TABLE, text, from, to, hash);
    if (segment === undefined) {
      this.previous = '';
    } else {
      const previous = this.previous;
      const adjacent = from - this.previousEnd <= 2;
      if (
        adjacent &&
        ((segment === 'secret' && previous === 'aws') ||
          (segment === 'access' && previous === 'secret'))
      ) {
        context.aws.push(to);
      }
      if (segment === 'twilio') this.twilioEnd = to;
      else if (
        ((segment === 'token' && adjacent && previous === 'auth') || segment === 'secret') &&
        from - this.twilioEnd <= 40
      ) {
        context.twilio.push(to);
      }
      if (
        PRIVATE_KEY_WORDS.has(segment) ||
        (segment === 'key' && adjacent && PRIVATE_KEY_QUALIFIERS.has(previous))
      ) {
        context.privateKey.push(to);
      }
      if (segment === 'key' && !(adjacent && previous === 'public')) context.key.push(to);
      this.previous = segment;
    }
    this.previousEnd = to;
  }
}
