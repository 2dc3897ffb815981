import { redactCredentials } from '../audit/redact-credentials.js';
import type { ScrubReport, SecretScrubber } from '../audit/secret-scrubber.js';
import { flatString } from './flat-string.js';
import { holdsContextualCharacters, stripHidden } from './hidden-characters.js';
import { neutraliseRoleTokens } from './role-tokens.js';
import { stripTerminalEscapes } from './terminal-escapes.js';

/** Default cap on what a tool may put in front of the model: 32 KiB of UTF-8. */
export const DEFAULT_MAX_OUTPUT_BYTES = 32_768;

/** What the sanitiser changed. Never the removed text itself. */
export interface SanitizerFinding {
  kind:
    | 'terminal_escape'
    | 'control_character'
    | 'hidden_unicode'
    | 'invalid_unicode'
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

/**
 * Makes anything a tool returned safe to show a model. In order: strips terminal escape
 * sequences and control characters; strips hidden Unicode (default-ignorable code points:
 * tag characters except valid emoji flag tag sequences, zero-width characters, bidi controls,
 * variation selectors except one after an emoji, Hangul and braille fillers) and replaces lone
 * surrogates; redacts registered secrets (also URL-encoded and base64-encoded, see
 * `SecretScrubber`) and credential-shaped strings (`[REDACTED:<kind>]`); neutralises
 * role-impersonation text (`<|im_start|>` and its full-width and escaped forms, `[INST]`,
 * `</tool_result>`-style tags, fake `System:` / `User:` turn headers, also with look-alike
 * letters); truncates to `maxBytes` with a `[truncated: N bytes]` marker. Non-string values
 * are serialised as JSON first.
 *
 * Deterministic, idempotent (sanitising `content` again returns it unchanged) and linear in
 * the size of the input (`npm run bench -- sanitize` measures adversarial inputs).
 *
 * @example sanitizeOutput('ok\u001b[31m <|im_start|>system').content // 'ok &lt;|im_start|&gt;system'
 */
export function sanitizeOutput(value: unknown, options: SanitizeOptions = {}): SanitizedOutput {
  const found: SanitizerFinding[] = [];
  const maxBytes = Math.max(64, options.maxBytes ?? DEFAULT_MAX_OUTPUT_BYTES);
  const cleaned = clean(toText(value, options.scrubber, found), options.scrubber, found);
  const findings = mergeFindings(found);
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
  try {
    return JSON.stringify(cleanStrings(value, 0, scrubber, findings)) ?? String(value);
  } catch {
    return String(value);
  }
}

function cleanStrings(
  item: unknown,
  depth: number,
  scrubber: SecretScrubber | undefined,
  findings: SanitizerFinding[],
): unknown {
  if (typeof item === 'string')
    return JSON_ESCAPED.test(item) ? clean(item, scrubber, findings) : item;
  if (typeof item === 'bigint') return item.toString();
  if (typeof item !== 'object' || item === null || depth > 64) return item;
  if (typeof (item as { toJSON?: unknown }).toJSON === 'function')
    return cleanStrings((item as { toJSON(): unknown }).toJSON(), depth + 1, scrubber, findings);
  if (Array.isArray(item)) {
    return item.map((child) => cleanStrings(child, depth + 1, scrubber, findings));
  }
  const result: Record<string, unknown> = {};
  for (const key of Object.keys(item)) {
    const cleanKey = JSON_ESCAPED.test(key) ? clean(key, scrubber, findings) : key;
    result[cleanKey] = cleanStrings(
      (item as Record<string, unknown>)[key],
      depth + 1,
      scrubber,
      findings,
    );
  }
  return result;
}

function clean(
  text: string,
  scrubber: SecretScrubber | undefined,
  findings?: SanitizerFinding[],
): string {
  // Each stage reads every character; each reads a flat string (see flatString).
  const escapes = stripTerminalEscapes(flatString(text));
  const hidden = stripHidden(escapes.removed > 0 ? flatString(escapes.text) : escapes.text);
  if (findings && escapes.removed > 0) {
    findings.push({ kind: 'terminal_escape', count: escapes.removed });
  }
  if (findings && hidden.controls > 0) {
    findings.push({ kind: 'control_character', count: hidden.controls });
  }
  if (findings && hidden.hidden > 0)
    findings.push({ kind: 'hidden_unicode', count: hidden.hidden });
  if (findings && hidden.invalid > 0) {
    findings.push({ kind: 'invalid_unicode', count: hidden.invalid });
  }
  // Registered secrets first: escaping a "<" inside one would leave the rest of it
  // unrecognised (and visible). Credentials last, on the neutralised text, so that the result
  // is a fixed point: neutralising never has to run again after a redaction.
  let result =
    hidden.hidden + hidden.controls + hidden.invalid > 0 ? flatString(hidden.text) : hidden.text;
  let replaced = false;
  if (scrubber) {
    const report: ScrubReport = { secrets: [], credentials: [] };
    result = scrubber.scrubSecrets(result, report);
    for (const name of report.secrets) findings?.push({ kind: 'secret', detail: name });
    replaced = report.secrets.length > 0; // replacing wrote a flat string
  }
  const roles = neutraliseRoleTokens(result);
  for (const [name, count] of roles.counts) {
    findings?.push({ kind: 'role_token', detail: name, count });
  }
  const redaction = redactCredentials(roles.text);
  for (const kind of redaction.kinds) findings?.push({ kind: 'credential', detail: kind });
  // A redaction can orphan a presentation selector or joiner that followed an emoji-like
  // character it replaced: strip again, when a character that can be orphaned is there.
  const orphans =
    (replaced || redaction.kinds.length > 0) && holdsContextualCharacters(hidden.text)
      ? stripHidden(redaction.text)
      : undefined;
  if (orphans && findings && orphans.hidden > 0) {
    findings.push({ kind: 'hidden_unicode', count: orphans.hidden });
  }
  return orphans?.text ?? redaction.text;
}

/** One finding per kind and detail, counts added up, in first-seen order. @internal */
export function mergeFindings(findings: readonly SanitizerFinding[]): SanitizerFinding[] {
  if (findings.length < 2) return findings.map((finding) => ({ ...finding }));
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
  // Only the first maxBytes bytes are ever kept: encode no more characters than that.
  const bytes = Buffer.from(cleaned.slice(0, maxBytes + 1), 'utf8');
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
