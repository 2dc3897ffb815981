// The sanitiser and credential redactor as they were before the linear rewrite (regular
// expressions, v0.1): the baseline `npm run bench -- sanitize` runs side by side with the
// current code. Kept only for the benchmark; quadratic on the adversarial inputs.

interface CredentialPattern {
  kind: string;
  pattern: RegExp;
  replace: string;
}
interface RolePattern {
  name: string;
  pattern: RegExp;
  neutralise(match: string, ...groups: string[]): string;
}

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

/** The old `redactCredentials` (without its pre-check, which adversarial text passes anyway). */
export function regexRedact(text: string): string {
  let result = text;
  for (const { pattern, replace } of PATTERNS) {
    pattern.lastIndex = 0;
    result = result.replace(pattern, replace);
  }
  return result;
}

const escapeAngles = (match: string): string => match.replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The role-impersonation patterns, applied in order. */
const ROLE_PATTERNS: readonly RolePattern[] = [
  {
    // ChatML and friends: <|im_start|>, <|eot_id|>, <|start_header_id|>, DeepSeek's <｜…｜>.
    name: 'chat_template_token',
    pattern: /<[|｜][^<>\n]{1,64}?[|｜]>/g,
    neutralise: escapeAngles,
  },
  {
    // Llama 2 / Mistral / Gemma markers.
    name: 'instruction_marker',
    pattern:
      /\[\/?(?:INST|SYS|SYSTEM_PROMPT|AVAILABLE_TOOLS|TOOL_CALLS|TOOL_RESULTS|TOOL_CONTENT)\]|<<\/?SYS>>|<\/?(?:start_of_turn|end_of_turn)>/gi,
    neutralise: (match) =>
      match.startsWith('[') ? `(${match.slice(1, -1)})` : escapeAngles(match),
  },
  {
    // Tags that open or close a tool result, a function call or a turn in XML-style prompts
    // (<tool_result>, </function_results>, <tool_description>, <system>, <IMPORTANT>, …).
    name: 'tool_tag',
    pattern:
      /<\/?\s*(?:antml:)?(?:(?:tool|function)[\w-]*|tools|invoke|parameter|system[\w-]*|assistant|user|human|developer|instructions?|important)\b[^<>]{0,200}>/gi,
    neutralise: escapeAngles,
  },
  {
    // A line that opens a fake turn: "System: ...", "### Assistant:", "\n\nHuman:" — also after
    // an escaped newline, as in JSON-serialised output ("...\\n\\nSystem: ...").
    name: 'turn_header',
    pattern: /(^|\\[nr])([ \t>#*_-]*)(system|assistant|developer|human)([ \t]*:)/gim,
    neutralise: (_match, newline = '', lead = '', role = '', colon = '') =>
      `${newline}${lead}[${role}]${colon}`,
  },
];

const TERMINAL_ESCAPE =
  /\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)|(?:\x1b[PX^_]|[\x90\x98\x9e\x9f])[^\x1b\x9c]*(?:\x1b\\|\x9c)|\x1b[ -/]*[0-~]/g;

// Kept: a valid emoji tag sequence (🏴 + 2–5 tag letters/digits + CANCEL TAG, UTS #51 — the
// subdivision flags), and a zero-width joiner between two emoji (family, profession emoji).
// Removed: every other tag character (ASCII smuggling), zero-width characters, bidi controls,
// variation selectors 17–256 (a known smuggling channel), C0/C1 controls except tab, newline
// and CR before newline.
const HIDDEN =
  // biome-ignore lint/suspicious/noMisleadingCharacterClass: these invisible and combining characters are matched one by one on purpose
  /(\u{1F3F4}[\u{E0061}-\u{E007A}]{2}[\u{E0030}-\u{E0039}\u{E0061}-\u{E007A}]{1,3}\u{E007F})|(?<=[\p{Extended_Pictographic}\p{Emoji_Modifier}\u{FE0F}])(\u200D)(?=\p{Extended_Pictographic})|([\u{E0000}-\u{E007F}\u{E0100}-\u{E01EF}\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u206F\u061C\u180E\uFEFF\u00AD])|([\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F]|\r(?!\n))/gu;

/** The old `sanitizeOutput` cleaning step (escapes, hidden characters, role tokens, credentials). */
export function regexSanitize(text: string): string {
  let result = text.replace(TERMINAL_ESCAPE, '');
  result = result.replace(HIDDEN, (match, flag, joiner) =>
    flag !== undefined || joiner !== undefined ? match : '',
  );
  for (let round = 0; round < 8; round++) {
    const before = result;
    for (const { pattern, neutralise } of ROLE_PATTERNS) {
      result = result.replace(pattern, (...args) => neutralise(...(args as [string, ...string[]])));
    }
    if (result === before) break;
  }
  return regexRedact(result);
}
