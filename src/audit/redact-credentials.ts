/** A kind of credential the redactor recognises, named in `[REDACTED:<kind>]` markers and security events. */
export type CredentialKind =
  | 'pem_private_key'
  | 'aws_access_key_id'
  | 'aws_secret_access_key'
  | 'github_token'
  | 'slack_token'
  | 'stripe_secret_key'
  | 'anthropic_api_key'
  | 'openai_api_key'
  | 'google_api_key'
  | 'jwt'
  | 'bearer_token'
  | 'connection_string_password'
  | 'assigned_secret';

interface CredentialPattern {
  kind: CredentialKind;
  pattern: RegExp;
  /** Replacement; `$<keep>` is preserved when the pattern names a `keep` group. */
  replace: string;
}

// A value that is already a redaction marker is never redacted again: this keeps the
// redactor idempotent (redacting twice changes nothing).
const NOT_MARKER = '(?!\\[REDACTED)';

// Order matters: specific, long patterns first so that e.g. an Anthropic key is not
// reported as an OpenAI key, and a PEM block is removed whole.
const PATTERNS: readonly CredentialPattern[] = [
  {
    kind: 'pem_private_key',
    pattern:
      /-----BEGIN ((?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?)-----[\s\S]*?-----END \1-----/g,
    replace: '[REDACTED:pem_private_key]',
  },
  {
    kind: 'connection_string_password',
    pattern: new RegExp(
      `(?<keep>\\b[a-z][a-z0-9+.-]*://[^\\s:@/]+:)${NOT_MARKER}[^\\s@/]+(?=@)`,
      'gi',
    ),
    replace: '$<keep>[REDACTED:connection_string_password]',
  },
  {
    kind: 'jwt',
    pattern: /\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{10,}/g,
    replace: '[REDACTED:jwt]',
  },
  {
    kind: 'anthropic_api_key',
    pattern: /\bsk-ant-[A-Za-z0-9_-]{20,}/g,
    replace: '[REDACTED:anthropic_api_key]',
  },
  {
    kind: 'stripe_secret_key',
    pattern: /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}/g,
    replace: '[REDACTED:stripe_secret_key]',
  },
  {
    kind: 'openai_api_key',
    pattern: /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g,
    replace: '[REDACTED:openai_api_key]',
  },
  {
    kind: 'github_token',
    pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})/g,
    replace: '[REDACTED:github_token]',
  },
  {
    kind: 'slack_token',
    pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g,
    replace: '[REDACTED:slack_token]',
  },
  {
    kind: 'aws_access_key_id',
    pattern: /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b/g,
    replace: '[REDACTED:aws_access_key_id]',
  },
  {
    kind: 'aws_secret_access_key',
    pattern: new RegExp(
      `(?<keep>(?:aws_secret_access_key|secret_access_key|aws_secret)["']?\\s*[:=]\\s*["']?)${NOT_MARKER}[A-Za-z0-9/+=]{40}`,
      'gi',
    ),
    replace: '$<keep>[REDACTED:aws_secret_access_key]',
  },
  {
    kind: 'google_api_key',
    pattern: /\bAIza[0-9A-Za-z_-]{35}/g,
    replace: '[REDACTED:google_api_key]',
  },
  {
    kind: 'bearer_token',
    pattern: new RegExp(`(?<keep>\\bBearer\\s+)${NOT_MARKER}[A-Za-z0-9._~+/-]{20,}=*`, 'g'),
    replace: '$<keep>[REDACTED:bearer_token]',
  },
  {
    kind: 'assigned_secret',
    pattern: new RegExp(
      `(?<keep>\\b(?:password|passwd|pwd|secret|client_secret|api[_-]?key|access[_-]?token|auth[_-]?token)["']?\\s*[:=]\\s*["']?)${NOT_MARKER}[^\\s"',;]{8,}`,
      'gi',
    ),
    replace: '$<keep>[REDACTED:assigned_secret]',
  },
];

// Every pattern above contains one of these fragments; most text contains none, so one
// case-insensitive scan rules out all patterns at once. Keep in sync when adding a pattern
// (a test checks that every pattern's examples pass this filter).
const MAY_CONTAIN_CREDENTIAL =
  /-----BEGIN|:\/\/|eyJ|sk-|[sr]k_|gh[pousr]_|github_pat_|xox[abposr]-|A(?:KIA|SIA|GPA|IDA|ROA|NPA|NVA|IPA)|secret|AIza|Bearer|passw|pwd|api[_-]?key|token/i;

/** True when `text` might contain a credential (a fast, conservative pre-check). */
export function mayContainCredential(text: string): boolean {
  return MAY_CONTAIN_CREDENTIAL.test(text);
}

/** The result of {@link redactCredentials}. */
export interface CredentialRedaction {
  text: string;
  /** Kinds found, each once, in pattern order. Never the values. */
  kinds: CredentialKind[];
}

/**
 * Replaces credential-shaped substrings (cloud and API keys, tokens, JWTs, PEM private keys,
 * passwords in connection strings and assignments) with `[REDACTED:<kind>]`.
 * Deterministic and idempotent: `redactCredentials(redactCredentials(s).text).text` equals
 * `redactCredentials(s).text`, and a second pass reports no kinds.
 *
 * @example redactCredentials('url=postgres://app:hunter22@db/prod').text
 * // 'url=postgres://app:[REDACTED:connection_string_password]@db/prod'
 */
export function redactCredentials(text: string): CredentialRedaction {
  return MAY_CONTAIN_CREDENTIAL.test(text) ? scanCredentials(text) : { text, kinds: [] };
}

/** {@link redactCredentials} without the pre-check: every pattern, every time (for tests). */
export function scanCredentials(text: string): CredentialRedaction {
  const kinds: CredentialKind[] = [];
  let result = text;
  for (const { kind, pattern, replace } of PATTERNS) {
    pattern.lastIndex = 0;
    if (!pattern.test(result)) continue;
    pattern.lastIndex = 0;
    result = result.replace(pattern, replace);
    kinds.push(kind);
  }
  return { text: result, kinds };
}
