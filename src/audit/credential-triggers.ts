import { PREFIX_FORMATS, type PrefixFormat, prefixesOf } from './credential-formats.js';
import { pem, putty } from './credential-key-blocks.js';
import type { CredentialKind, CredentialSpan } from './credential-kind.js';
import { boundary, push, type Scan } from './credential-scan.js';
import {
  ALNUM,
  AT,
  BASE64,
  COLON,
  DASH,
  DIGIT,
  DOT,
  EQUALS,
  has,
  isMarkerAt,
  lowerAscii,
  PERCENT,
  PLUS,
  QUOTE,
  runEnd,
  runUntil,
  SEMICOLON,
  SLASH,
  SPACE,
  startsWithFolded,
  TILDE,
  TOKEN,
  UNDERSCORE,
  UPPER,
  WORD,
} from './credential-text.js';

/**
 * `prefix` (exact case) + a run of `chars`, `minimum` (to `maximum`) characters in all,
 * starting where no character of `chars` precedes: every maximal run is read by one attempt
 * at most.
 */
function token(
  scan: Scan,
  at: number,
  prefix: string,
  kind: CredentialKind,
  chars: number,
  minimum: number,
  bodyChars = chars,
  maximum = Number.POSITIVE_INFINITY,
): void {
  const { text } = scan;
  if (!text.startsWith(prefix, at) || !boundary(scan, at, chars)) return;
  const end = runEnd(text, at + prefix.length, chars);
  if (end - at < minimum || end - at > maximum) return;
  if (bodyChars !== chars && runEnd(text, at + prefix.length, bodyChars) < end) return;
  push(scan, at, end, kind);
}

// `eyJ…` `.eyJ…` `.sig`: a JWT. Attempts start only where no token character or dot precedes,
// and the later segments start after a dot, so each run is read by one attempt at most.
function jwt(scan: Scan, at: number): void {
  const { text } = scan;
  if (!text.startsWith('eyJ', at) || !boundary(scan, at, TOKEN | DOT)) return;
  const header = runEnd(text, at, TOKEN);
  if (header - at < 8 || text.charCodeAt(header) !== 46 || !text.startsWith('eyJ', header + 1)) {
    return;
  }
  const claims = runEnd(text, header + 1, TOKEN);
  if (claims - header - 1 < 8 || text.charCodeAt(claims) !== 46) return;
  const signature = runEnd(text, claims + 1, TOKEN);
  if (signature - claims - 1 >= 10) push(scan, at, signature, 'jwt');
}

// SendGrid: SG.<22>.<43>; the same one-attempt-per-run argument as the JWT.
function sendgrid(scan: Scan, at: number): void {
  const { text } = scan;
  if (!text.startsWith('SG.', at) || !boundary(scan, at, TOKEN | DOT)) return;
  const first = runEnd(text, at + 3, TOKEN);
  if (first - at - 3 < 16 || text.charCodeAt(first) !== 46) return;
  const second = runEnd(text, first + 1, TOKEN);
  if (second - first - 1 >= 30) push(scan, at, second, 'sendgrid_api_key');
}

// The prefix rows of the table of formats, by their first two characters (both ASCII): a
// position whose pair starts no prefix costs one table read.
const PREFIXES_BY_PAIR = new Map<number, { prefix: string; format: PrefixFormat }[]>();
const STARTS_PREFIX = new Uint8Array(128 * 128);
for (const row of PREFIX_FORMATS) {
  const pair = row.prefix.charCodeAt(0) * 128 + row.prefix.charCodeAt(1);
  STARTS_PREFIX[pair] = 1;
  PREFIXES_BY_PAIR.set(pair, [...(PREFIXES_BY_PAIR.get(pair) ?? []), row]);
}

// The longest prefix of the table found at `at` decides the row (`sk-ant-` before `sk-`).
function prefixToken(scan: Scan, at: number, pair: number): void {
  for (const { prefix, format } of PREFIXES_BY_PAIR.get(pair)!) {
    if (!scan.text.startsWith(prefix, at)) continue;
    const { alphabet, minimum, bodyAlphabet, maximum, kind } = format;
    token(scan, at, prefix, kind as CredentialKind, alphabet, minimum, bodyAlphabet, maximum);
    return;
  }
}

const AWS_ID_PREFIXES = prefixesOf('aws_key_id');

function awsKeyId(scan: Scan, at: number): void {
  const { text } = scan;
  // Cheap rejections first: this runs at every capital A.
  if (!has(text.charCodeAt(at + 3), UPPER) || !boundary(scan, at, WORD)) return;
  if (!AWS_ID_PREFIXES.some((prefix) => text.startsWith(prefix, at))) return;
  const end = runEnd(text, at, WORD);
  if (runEnd(text, at, UPPER | DIGIT) < at + 20) return;
  if (end - at === 20) push(scan, at, end, 'aws_access_key_id');
  // Glued to more word characters: an id only if a credential found later starts right after
  // it (its marker will end the run there, so the next redaction would see an id).
  else scan.pendingAwsIds.push(at);
}

// Any `scheme://user:password@`: the password is redacted, the rest kept. The user part stops
// at ":" and the password at "/", so the forward reads of two "://" never overlap; the scheme
// is looked at over at most 32 characters backwards.
function userinfo(scan: Scan, at: number): void {
  const { text } = scan;
  if (!text.startsWith('://', at)) return;
  let schemeStart = at;
  while (schemeStart > 0 && at - schemeStart < 32) {
    if (!has(text.charCodeAt(schemeStart - 1), ALNUM | PLUS | DASH | DOT)) break;
    schemeStart--;
  }
  if (schemeStart === at) return;
  const userStart = at + 3;
  const userEnd = runUntil(text, userStart, SPACE | COLON | AT | SLASH);
  if (userEnd === userStart || text.charCodeAt(userEnd) !== 58) return;
  const passwordStart = userEnd + 1;
  const passwordEnd = runUntil(text, passwordStart, SPACE | AT | SLASH);
  if (passwordEnd === passwordStart || text.charCodeAt(passwordEnd) !== 64) return;
  if (isMarkerAt(text, passwordStart)) return;
  const scheme = text.slice(Math.max(schemeStart, at - 5), at).toLowerCase();
  const http = scheme.endsWith('http') || scheme.endsWith('https');
  push(
    scan,
    passwordStart,
    passwordEnd,
    http ? 'http_basic_credentials' : 'connection_string_password',
    3,
  );
}

function slackWebhook(scan: Scan, at: number): void {
  const { text } = scan;
  if (!startsWithFolded(text, 'hooks.slack.com/', at)) return;
  const kindEnd = runEnd(text, at + 16, WORD);
  const kind = text.slice(at + 16, kindEnd).toLowerCase();
  if (kind !== 'services' && kind !== 'workflows' && kind !== 'triggers') return;
  if (text.charCodeAt(kindEnd) !== 47) return;
  const end = runEnd(text, kindEnd + 1, TOKEN | SLASH);
  if (end - kindEnd - 1 >= 10) push(scan, kindEnd + 1, end, 'slack_webhook');
}

// `Bearer <token>` / `Basic <base64 of user:password>`; the scheme word is kept.
function authorization(scan: Scan, at: number, scheme: 'bearer' | 'basic'): void {
  const { text } = scan;
  if (!startsWithFolded(text, scheme, at) || !boundary(scan, at, WORD)) return;
  const gap = runEnd(text, at + scheme.length, SPACE);
  if (gap === at + scheme.length) return;
  if (scheme === 'bearer') {
    const end = runEnd(text, gap, ALNUM | DOT | UNDERSCORE | TILDE | PLUS | SLASH | DASH);
    if (end - gap >= 20) push(scan, gap, runEnd(text, end, EQUALS), 'bearer_token', 4);
    return;
  }
  const end = runEnd(text, gap, BASE64);
  const padded = runEnd(text, end, EQUALS);
  if (end - gap < 8 || padded - end > 2) return;
  const decoded = Buffer.from(text.slice(gap, padded), 'base64').toString('latin1');
  if (decoded.includes(':') && /^[\x20-\x7e]+$/.test(decoded)) {
    push(scan, gap, padded, 'http_basic_credentials', 4);
  }
}

// Azure: `AccountKey=…`, `SharedAccessKey=…`, `SharedAccessSignature=…` in connection strings,
// `?…&sig=…` in SAS URLs. The value is redacted, the name kept. A name glued to a value
// character is skipped, so repeats cannot make one run be read again and again.
function azure(scan: Scan, at: number): void {
  const { text } = scan;
  let name: string;
  let kind: CredentialKind = 'azure_storage_key';
  if (startsWithFolded(text, 'accountkey=', at)) name = 'accountkey=';
  else if (startsWithFolded(text, 'sharedaccesskey=', at)) name = 'sharedaccesskey=';
  else if (startsWithFolded(text, 'sharedaccesssignature=', at)) {
    name = 'sharedaccesssignature=';
    kind = 'azure_sas_token';
  } else if (startsWithFolded(text, 'sig=', at)) {
    const before = text.charCodeAt(at - 1);
    if (before !== 63 && before !== 38 && before !== 59) return; // ? & ;
    const start = at + 4;
    const end = runEnd(text, start, BASE64 | EQUALS | PERCENT);
    if (end - start >= 16) push(scan, start, end, 'azure_sas_token', 2);
    return;
  } else {
    return;
  }
  const start = at + name.length;
  if (kind === 'azure_sas_token') {
    if (!boundary(scan, at, ALNUM)) return;
    const end = runUntil(text, start, SPACE | SEMICOLON | QUOTE);
    if (end - start >= 16) push(scan, start, end, kind, 2);
    return;
  }
  if (!boundary(scan, at, BASE64 | EQUALS)) return;
  const end = runEnd(text, start, BASE64 | EQUALS);
  if (end - start >= 20) push(scan, start, end, kind, 2);
}

/**
 * Finds the credentials that announce themselves with a literal (a vendor prefix, a PEM
 * header, a URL's "://", an HTTP auth scheme): one pass dispatching on the character at each
 * position, each rule reading forward from its literal as documented above.
 */
export function findTriggeredCredentials(text: string, found: CredentialSpan[]): void {
  const scan: Scan = {
    text,
    found,
    pemEnds: new Map(),
    pemBody: { start: 0, end: -1 },
    ends: new Set(),
    pendingAwsIds: [],
  };
  const length = text.length;
  for (let at = 0; at < length; at++) {
    const code = text.charCodeAt(at);
    // Most characters start no rule: the switch sends them straight on.
    if (code < 45 || code > 120) continue;
    const second = text.charCodeAt(at + 1);
    if (second < 128 && STARTS_PREFIX[code * 128 + second] === 1) {
      prefixToken(scan, at, code * 128 + second);
    }
    // Each other rule's literal has a known second character (case-folded where the rule
    // folds): testing it here spares a call at most letters of ordinary prose.
    const next = lowerAscii(second);
    switch (code) {
      case 45: // -
        if (next === 45) pem(scan, at);
        break;
      case 58: // :
        if (next === 47) userinfo(scan, at);
        break;
      case 65: // A
        awsKeyId(scan, at);
        if (next === 99) azure(scan, at); // AccountKey=
        break;
      case 97: // a
        if (next === 99) azure(scan, at);
        break;
      case 66: // B
      case 98: // b
        if (next === 101) authorization(scan, at, 'bearer');
        else if (next === 97) authorization(scan, at, 'basic');
        break;
      case 72: // H
      case 104: // h
        if (next === 111) slackWebhook(scan, at);
        break;
      case 80: // P
      case 112: // p
        if (next === 114) putty(scan, at);
        break;
      case 83: // S
        if (next === 103)
          sendgrid(scan, at); // SG.
        else if (next === 104 || next === 105) azure(scan, at); // SharedAccess…, sig=
        break;
      case 115: // s
        if (next === 104 || next === 105) azure(scan, at);
        break;
      case 101: // e
        if (second === 121) jwt(scan, at);
        break;
    }
  }
  if (scan.pendingAwsIds.length > 0) {
    const starts = new Set(found.map((span) => span.start));
    for (const at of scan.pendingAwsIds) {
      if (starts.has(at + 20)) push(scan, at, at + 20, 'aws_access_key_id');
    }
  }
}
