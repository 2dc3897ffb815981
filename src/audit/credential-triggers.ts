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
 * `prefix` (exact case) + a run of `chars`, `minimum` characters in all, starting where no
 * character of `chars` precedes: every maximal run is read by one attempt at most.
 */
function token(
  scan: Scan,
  at: number,
  prefix: string,
  kind: CredentialKind,
  chars: number,
  minimum: number,
  bodyChars = chars,
): void {
  const { text } = scan;
  if (!text.startsWith(prefix, at) || !boundary(scan, at, chars)) return;
  const end = runEnd(text, at + prefix.length, chars);
  if (end - at < minimum) return;
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

function openAiOrAnthropic(scan: Scan, at: number): void {
  const { text } = scan;
  if (!text.startsWith('sk-', at) || !boundary(scan, at, TOKEN)) return;
  const end = runEnd(text, at, TOKEN);
  if (text.startsWith('sk-ant-', at)) {
    if (end - at >= 27) push(scan, at, end, 'anthropic_api_key');
  } else if (end - at >= 23) {
    push(scan, at, end, 'openai_api_key');
  }
}

const AWS_ID_PREFIXES = ['AKIA', 'ASIA', 'AGPA', 'AIDA', 'AROA', 'ANPA', 'ANVA', 'AIPA'];

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
    // Each rule's literal has a known second character (case-folded where the rule folds):
    // testing it here spares a call at most letters of ordinary prose.
    const next = text.charCodeAt(at + 1) | 32;
    switch (code) {
      case 45: // -
        if (next === 45) pem(scan, at);
        break;
      case 58: // :
        if (next === 47) userinfo(scan, at);
        break;
      case 65: // A
        if (text.charCodeAt(at + 1) === 73 && text.charCodeAt(at + 2) === 122) {
          token(scan, at, 'AIza', 'google_api_key', TOKEN, 39);
        } else {
          awsKeyId(scan, at);
        }
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
      case 71: // G
        token(scan, at, 'GOCSPX-', 'google_oauth_client_secret', TOKEN, 31);
        break;
      case 72: // H
      case 104: // h
        if (next === 111) slackWebhook(scan, at);
        else if (code === 104 && next === 102) {
          token(scan, at, 'hf_', 'huggingface_token', WORD, 33, ALNUM);
        }
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
        if (next === 107) {
          openAiOrAnthropic(scan, at);
          token(
            scan,
            at,
            at + 3 < length && text[at + 3] === 'l' ? 'sk_live_' : 'sk_test_',
            'stripe_secret_key',
            WORD,
            24,
          );
        } else if (next === 104 || next === 105) {
          azure(scan, at);
        }
        break;
      case 114: // r
        if (next === 107) {
          token(
            scan,
            at,
            at + 3 < length && text[at + 3] === 'l' ? 'rk_live_' : 'rk_test_',
            'stripe_secret_key',
            WORD,
            24,
          );
        }
        break;
      case 101: // e
        if (text.charCodeAt(at + 1) === 121) jwt(scan, at);
        break;
      case 103: // g
        if (text.charCodeAt(at + 1) === 104) {
          if (text.charCodeAt(at + 3) === 95)
            token(scan, at, `gh${text[at + 2]}_`, 'github_token', WORD, 40, WORD);
          else token(scan, at, 'github_pat_', 'github_token', WORD, 33);
        }
        break;
      case 119: // w
        if (next === 104) token(scan, at, 'whsec_', 'stripe_webhook_secret', WORD, 30);
        break;
      case 120: // x
        if (text.startsWith('xox', at) && 'abposr'.includes(text[at + 3] ?? '_')) {
          token(scan, at, text.slice(at, at + 5), 'slack_token', ALNUM | DASH, 15);
        }
        break;
      case 110: // n
        if (next === 112) token(scan, at, 'npm_', 'npm_token', WORD, 40, ALNUM);
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
