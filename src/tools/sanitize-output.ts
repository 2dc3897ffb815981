import { redactCredentials } from '../audit/redact-credentials.js';
import type { ScrubReport, SecretScrubber } from '../audit/secret-scrubber.js';
import { ROLE_PATTERNS } from './role-tokens.js';

/** Default cap on what a tool may put in front of the model: 32 KiB of UTF-8. */
export const DEFAULT_MAX_OUTPUT_BYTES = 32_768;

/** What the sanitiser changed. Never the removed text itself. */
export interface SanitizerFinding {
  kind:
    | 'terminal_escape'
    | 'control_character'
    | 'hidden_unicode'
    | 'role_token'
    | 'credential'
    | 'secret'
    | 'truncated';
  /** Credential kind, secret name or role pattern name; bytes removed for `truncated`. */
  detail?: string;
  /** Occurrences removed (for character-level findings). */
  count?: number;
}

/** Options for {@link sanitizeOutput}. */
export interface SanitizeOptions {
  /** Longest content in UTF-8 bytes, marker included (default {@link DEFAULT_MAX_OUTPUT_BYTES}, minimum 64). */
  maxBytes?: number;
  /** Also replaces the values of registered secrets (`[REDACTED:NAME]`). */
  scrubber?: SecretScrubber;
}

/** The result of {@link sanitizeOutput}. */
export interface SanitizedOutput {
  /** Safe text for a `ToolMessage`. */
  content: string;
  findings: SanitizerFinding[];
}

// CSI, OSC, DCS/SOS/PM/APC strings and two-character escapes, 7-bit and 8-bit (C1) forms.
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

/**
 * Makes anything a tool returned safe to show a model. In order: strips terminal escape
 * sequences and control characters; strips hidden Unicode (tag characters except valid emoji
 * flag tag sequences, zero-width characters, bidi controls); neutralises role-impersonation
 * tokens (`<|im_start|>`, `[INST]`, fake `System:` turn headers, `</tool_result>`-style tags);
 * redacts registered secrets and credential-shaped strings (`[REDACTED:<kind>]`); truncates to
 * `maxBytes` with a `[truncated: N bytes]` marker. Non-string values are serialised as JSON first.
 *
 * Deterministic and idempotent: sanitising `content` again returns it unchanged.
 *
 * @example sanitizeOutput('ok\u001b[31m <|im_start|>system').content // 'ok &lt;|im_start|&gt;system'
 */
export function sanitizeOutput(value: unknown, options: SanitizeOptions = {}): SanitizedOutput {
  const found: SanitizerFinding[] = [];
  const maxBytes = Math.max(64, options.maxBytes ?? DEFAULT_MAX_OUTPUT_BYTES);
  const cleaned = clean(toText(value, options.scrubber, found), options.scrubber, found);
  const findings = merge(found);
  const total = Buffer.byteLength(cleaned);
  if (total <= maxBytes) return { content: cleaned, findings };
  const { content, removedBytes } = truncate(cleaned, total, maxBytes, options.scrubber);
  findings.push({ kind: 'truncated', detail: String(removedBytes) });
  return { content, findings };
}

// Non-string output: strings (keys included) that JSON would escape — control characters,
// quotes, backslashes — are cleaned before serialising, so that a control character becomes
// nothing rather than an escape ("\u001b") the model would read, and a secret containing a
// quote is still found. All other strings appear verbatim in the JSON text, which is cleaned
// as a whole afterwards.
const JSON_ESCAPED = /[\u0000-\u001f\u007f-\u009f"\\]/;
function toText(
  value: unknown,
  scrubber: SecretScrubber | undefined,
  findings: SanitizerFinding[],
): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  const cleanStrings = (item: unknown, depth: number): unknown => {
    if (typeof item === 'string')
      return JSON_ESCAPED.test(item) ? clean(item, scrubber, findings) : item;
    if (typeof item === 'bigint') return item.toString();
    if (typeof item !== 'object' || item === null || depth > 64) return item;
    if (typeof (item as { toJSON?: unknown }).toJSON === 'function')
      return cleanStrings((item as { toJSON(): unknown }).toJSON(), depth + 1);
    if (Array.isArray(item)) return item.map((child) => cleanStrings(child, depth + 1));
    const result: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(item)) {
      const cleanKey = JSON_ESCAPED.test(key) ? clean(key, scrubber, findings) : key;
      result[cleanKey] = cleanStrings(child, depth + 1);
    }
    return result;
  };
  try {
    return JSON.stringify(cleanStrings(value, 0)) ?? String(value);
  } catch {
    return String(value);
  }
}

function clean(
  text: string,
  scrubber: SecretScrubber | undefined,
  findings?: SanitizerFinding[],
): string {
  let result = text;
  let escapes = 0;
  result = result.replace(TERMINAL_ESCAPE, () => {
    escapes++;
    return '';
  });
  let controls = 0;
  let hidden = 0;
  result = result.replace(HIDDEN, (match, flag, joiner, invisible) => {
    if (flag !== undefined || joiner !== undefined) return match;
    if (invisible !== undefined) hidden++;
    else controls++;
    return '';
  });
  if (findings && escapes > 0) findings.push({ kind: 'terminal_escape', count: escapes });
  if (findings && controls > 0) findings.push({ kind: 'control_character', count: controls });
  if (findings && hidden > 0) findings.push({ kind: 'hidden_unicode', count: hidden });
  // Until nothing changes: neutralising one pattern can complete another, as in
  // "<|<<SYS>>|>", where escaping the inner marker leaves a bare "<|…|>" token. Every
  // rewrite removes an angle bracket or square bracket pair or quotes a turn header, so this
  // ends; the bound only guards against a pattern added later that does not.
  const roleCounts = new Map<string, number>();
  for (let round = 0; round < 8; round++) {
    const before = result;
    for (const { name, pattern, neutralise } of ROLE_PATTERNS) {
      result = result.replace(pattern, (...args) => {
        roleCounts.set(name, (roleCounts.get(name) ?? 0) + 1);
        // Extra arguments (offset, input) are ignored by the neutralisers.
        return neutralise(...(args as [string, ...string[]]));
      });
    }
    if (result === before) break;
  }
  for (const { name } of ROLE_PATTERNS) {
    const count = roleCounts.get(name);
    if (findings && count) findings.push({ kind: 'role_token', detail: name, count });
  }
  if (scrubber) {
    const report: ScrubReport = { secrets: [], credentials: [] };
    result = scrubber.scrubText(result, report);
    for (const name of report.secrets) findings?.push({ kind: 'secret', detail: name });
    for (const kind of report.credentials) findings?.push({ kind: 'credential', detail: kind });
  } else {
    const redaction = redactCredentials(result);
    result = redaction.text;
    for (const kind of redaction.kinds) findings?.push({ kind: 'credential', detail: kind });
  }
  return result;
}

// One finding per kind and detail, counts added up, in first-seen order.
function merge(findings: SanitizerFinding[]): SanitizerFinding[] {
  const merged = new Map<string, SanitizerFinding>();
  for (const finding of findings) {
    const key = `${finding.kind}\0${finding.detail ?? ''}`;
    const existing = merged.get(key);
    if (existing === undefined) merged.set(key, { ...finding });
    else if (existing.count !== undefined && finding.count !== undefined)
      existing.count += finding.count;
  }
  return [...merged.values()];
}

function truncate(
  cleaned: string,
  total: number,
  maxBytes: number,
  scrubber: SecretScrubber | undefined,
): { content: string; removedBytes: number } {
  const bytes = Buffer.from(cleaned, 'utf8');
  // Reserve room for the widest marker this output can need, so the result fits the cap.
  let budget = maxBytes - marker(total).length;
  for (let attempt = 0; attempt < 32 && budget > 0; attempt++) {
    let end = budget;
    while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--; // not inside a UTF-8 sequence
    // Cutting can orphan half of a pattern (a flag's tag letters, a key's prefix), so the kept
    // part is cleaned again and the whole checked: the result must be a fixed point.
    const prefix = clean(bytes.subarray(0, end).toString('utf8'), scrubber);
    const removedBytes = total - Buffer.byteLength(prefix);
    const candidate = prefix + marker(removedBytes);
    if (Buffer.byteLength(candidate) <= maxBytes && clean(candidate, scrubber) === candidate) {
      return { content: candidate, removedBytes };
    }
    budget = Math.min(end, Buffer.byteLength(prefix)) - 16;
  }
  return { content: marker(total).slice(1), removedBytes: total };
}

function marker(removedBytes: number): string {
  return `\n[truncated: ${removedBytes} bytes]`;
}
