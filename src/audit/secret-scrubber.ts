import { type CredentialKind, redactCredentials } from './redact-credentials.js';

/** Shortest secret value the scrubber will search for; shorter values would shred ordinary text. */
export const MIN_SECRET_LENGTH = 4;

/** What {@link SecretScrubber.scrub} removed. Names and kinds only, never values. */
export interface ScrubReport {
  secrets: string[];
  credentials: CredentialKind[];
}

/**
 * Removes secrets from anything on its way to the audit log, a tool message or the model:
 * values registered by name (from the `SecretsProvider`) become `[REDACTED:NAME]`, and
 * credential-shaped strings become `[REDACTED:<kind>]` even when nobody registered them.
 */
export class SecretScrubber {
  readonly #secrets = new Map<string, string>();
  #ordered: Array<[value: string, name: string]> = [];

  /**
   * Registers a secret value; from now on it never leaves {@link scrub} intact. Values shorter
   * than {@link MIN_SECRET_LENGTH} characters are ignored.
   */
  register(name: string, value: string): void {
    if (value.length < MIN_SECRET_LENGTH || this.#secrets.get(value) === name) return;
    this.#secrets.set(value, name);
    // Longest first, so a secret that contains another is replaced whole.
    this.#ordered = [...this.#secrets].sort((a, b) => b[0].length - a[0].length);
  }

  /** Scrubs one string; see {@link scrub}. */
  scrubText(text: string, report?: ScrubReport): string {
    let result = text;
    for (const [value, name] of this.#ordered) {
      if (!result.includes(value)) continue;
      result = result.split(value).join(`[REDACTED:${name}]`);
      if (report && !report.secrets.includes(name)) report.secrets.push(name);
    }
    const redaction = redactCredentials(result);
    if (report) {
      for (const kind of redaction.kinds) {
        if (!report.credentials.includes(kind)) report.credentials.push(kind);
      }
    }
    return redaction.text;
  }

  /**
   * Returns a deep copy of `value` with every string (object keys included) scrubbed.
   * Pass `report` to learn what was removed.
   */
  scrub<T>(value: T, report?: ScrubReport): T {
    return this.#walk(value, report) as T;
  }

  #walk(value: unknown, report: ScrubReport | undefined): unknown {
    if (typeof value === 'string') return this.scrubText(value, report);
    if (typeof value !== 'object' || value === null) return value;
    if (Array.isArray(value)) return value.map((item) => this.#walk(item, report));
    if (typeof (value as { toJSON?: unknown }).toJSON === 'function') {
      return this.#walk((value as { toJSON(): unknown }).toJSON(), report);
    }
    const result: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) {
      result[this.scrubText(key, report)] = this.#walk(child, report);
    }
    return result;
  }
}
