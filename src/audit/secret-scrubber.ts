import { VeridexError } from '../errors/index.js';
import {
  type CredentialKind,
  type CredentialRedaction,
  redactCredentials,
} from './redact-credentials.js';
import {
  type MatchTarget,
  PrefixMatcher,
  RollingMatcher,
  type SecretSpan,
  windowTag,
} from './rolling-matcher.js';
import type { SecretFingerprintStore } from './secret-fingerprint-store.js';
import { secretForms, weakSecretReason } from './secret-forms.js';
import { hmacSha256 } from './sha256.js';
import { TextEdits } from './text-edits.js';

/** Shortest secret value the scrubber will search for; shorter values would shred ordinary text. */
export const MIN_SECRET_LENGTH = 4;

/** What {@link SecretScrubber.scrub} removed. Names and kinds only, never values. */
export interface ScrubReport {
  secrets: string[];
  credentials: CredentialKind[];
}

/** Options for {@link SecretScrubber.attach}. */
export interface AttachOptions {
  /**
   * What to do with a secret too weak to have its fingerprint stored (see
   * `SecretFingerprintStore`): `'reject'` (default) throws `secret_too_weak` from `register`;
   * `'process-only'` scrubs it in this process only — other processes on the database will
   * not recognise it. An explicit, weaker opt-in.
   */
  weakSecrets?: 'reject' | 'process-only';
}

interface Attachment {
  store: SecretFingerprintStore;
  weakSecrets: 'reject' | 'process-only';
  matcher?: RollingMatcher;
  hmacKey?: Buffer;
  /** Values whose fingerprints this store has (or that it must not get). */
  handled: Set<string>;
  /** HMACs stored by this process: not loaded back as remote targets. */
  own: Set<string>;
  lastSeq: string;
  refreshing: Promise<void>;
}

/**
 * Removes secrets from anything on its way to the audit log, a tool message or the model:
 * values registered by name (from the `SecretsProvider`) become `[REDACTED:NAME]` — also
 * when they appear URL-encoded (any mix of `%XX` escapes) or base64-encoded (standard or
 * URL-safe alphabet, at any byte alignment inside a larger blob) — and credential-shaped
 * strings become `[REDACTED:<kind>]` even when nobody registered them.
 *
 * Across processes: {@link attach} a `SecretFingerprintStore` (an `AuditLog` over a database
 * does it), and secrets registered here are stored as fingerprints — never the values — that
 * every other process attached to the same database loads on {@link refresh} and scrubs too.
 *
 * Linear time in the length of the text, whatever it contains (rolling hash, see
 * `RollingMatcher`); a value is not found when it is split by inserted characters, encoded
 * in other ways (hex, line-wrapped base64, reversed) or only partly present.
 */
export class SecretScrubber {
  readonly #values = new Map<string, string>();
  readonly #local = new PrefixMatcher();
  readonly #attachments: Attachment[] = [];

  /**
   * Registers a secret value; from now on it never leaves {@link scrub} intact. Values shorter
   * than {@link MIN_SECRET_LENGTH} characters are ignored.
   * @throws VeridexError `secret_too_weak` when attached to a fingerprint store that rejects
   *   weak secrets and the value is too short or too simple to store a fingerprint of.
   */
  register(name: string, value: string): void {
    if (value.length < MIN_SECRET_LENGTH || this.#values.get(value) === name) return;
    for (const attachment of this.#attachments) {
      if (attachment.weakSecrets === 'reject') assertStorable(name, value);
    }
    this.#values.set(value, name);
    for (const { text } of secretForms(value)) this.#local.add(name, text);
  }

  /**
   * Shares secrets with every process that attaches the same store: the secrets registered so
   * far (and later) are stored as fingerprints on the next {@link refresh}, and the ones
   * others stored are loaded. Attaching the same store twice does nothing.
   * @throws VeridexError `secret_too_weak` for an already registered weak secret (see
   *   {@link AttachOptions.weakSecrets}).
   */
  attach(store: SecretFingerprintStore, options: AttachOptions = {}): void {
    if (this.#attachments.some((attachment) => attachment.store === store)) return;
    const weakSecrets = options.weakSecrets ?? 'reject';
    if (weakSecrets === 'reject') {
      for (const [value, name] of this.#values) assertStorable(name, value);
    }
    this.#attachments.push({
      store,
      weakSecrets,
      handled: new Set(),
      own: new Set(),
      lastSeq: '0',
      refreshing: Promise.resolve(),
    });
  }

  /** Whether a fingerprint store is attached, i.e. whether {@link refresh} has anything to do. */
  get shared(): boolean {
    return this.#attachments.length > 0;
  }

  /**
   * Stores the fingerprints of secrets registered since the last call and loads the ones other
   * processes stored, for every attached store. `AuditLog` calls it before each append.
   */
  async refresh(): Promise<void> {
    await Promise.all(
      this.#attachments.map((attachment) => {
        attachment.refreshing = attachment.refreshing.then(() => this.#refresh(attachment));
        return attachment.refreshing;
      }),
    );
  }

  async #refresh(attachment: Attachment): Promise<void> {
    if (!attachment.matcher || !attachment.hmacKey) {
      const keys = await attachment.store.keys();
      attachment.hmacKey = keys.hmacKey;
      attachment.matcher = new RollingMatcher(keys.rollingBase);
    }
    const { hmacKey, matcher } = attachment;
    const fresh = [...this.#values].filter(([value]) => !attachment.handled.has(value));
    const rows = fresh.flatMap(([value, name]) => {
      if (weakSecretReason(value) !== undefined) return []; // 'process-only' by option
      return secretForms(value).map(({ form, text }) => {
        const hmac = hmacSha256(hmacKey, text).toString('hex');
        attachment.own.add(hmac);
        return { name, form, length: text.length, tag: windowTag(text, matcher.base), hmac };
      });
    });
    await attachment.store.add(rows);
    for (const [value] of fresh) attachment.handled.add(value);
    for (const row of await attachment.store.since(attachment.lastSeq)) {
      attachment.lastSeq = row.seq;
      if (attachment.own.has(row.hmac)) continue;
      matcher.add(remoteTarget(row.name, row.length, row.tag, row.hmac, hmacKey));
    }
  }

  /** Scrubs one string: {@link scrubSecrets}, then `redactCredentials`; see {@link scrub}. */
  scrubText(text: string, report?: ScrubReport): string {
    const withoutSecrets = this.scrubSecrets(text, report);
    if (cleanTexts.has(withoutSecrets)) return withoutSecrets;
    const redaction = redactRemembering(withoutSecrets);
    if (report) {
      for (const kind of redaction.kinds) {
        if (!report.credentials.includes(kind)) report.credentials.push(kind);
      }
    }
    return redaction.text;
  }

  /** Replaces the registered secrets only (raw, URL- or base64-encoded) by `[REDACTED:NAME]`. */
  scrubSecrets(text: string, report?: ScrubReport): string {
    if (this.#values.size === 0 && !this.#hasRemoteTargets()) return text;
    const spans: SecretSpan[] = [];
    const matchers = [this.#local, ...this.#attachments.flatMap((item) => item.matcher ?? [])];
    for (const matcher of matchers) matcher.find(text, spans);
    const decoded = percentDecoded(text);
    if (decoded) {
      const inView: SecretSpan[] = [];
      for (const matcher of matchers) matcher.find(decoded.text, inView);
      for (const span of inView) {
        spans.push({
          start: decoded.map[span.start]!,
          end: decoded.map[span.end]!,
          name: span.name,
        });
      }
    }
    return spans.length > 0 ? replaceSpans(text, spans, report) : text;
  }

  #hasRemoteTargets(): boolean {
    for (const attachment of this.#attachments) if (attachment.matcher?.size) return true;
    return false;
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
    for (const key of Object.keys(value)) {
      result[this.scrubText(key, report)] = this.#walk(
        (value as Record<string, unknown>)[key],
        report,
      );
    }
    return result;
  }
}

// The audit trail scrubs the same short strings again and again (payload keys, tool names,
// rule names, verdicts). Credential redaction is a pure function of its text, so results for
// short texts in which it found nothing are remembered — only those: the memo never holds a
// credential (and registered secrets were replaced before it is consulted). Bounded by
// generations: when the current one is full it becomes the previous one (the one before is
// dropped), so remembering costs no eviction per entry.
const CLEAN_MEMO_GENERATION = 4096;
const CLEAN_MEMO_MAX_LENGTH = 256;
const cleanTexts = {
  current: new Set<string>(),
  previous: new Set<string>(),
  has(text: string): boolean {
    return this.current.has(text) || this.previous.has(text);
  },
  add(text: string): void {
    if (this.current.size >= CLEAN_MEMO_GENERATION) {
      this.previous = this.current;
      this.current = new Set();
    }
    this.current.add(text);
  },
};

/** `redactCredentials(text)`, remembering `text` when it is short and nothing was found. */
function redactRemembering(text: string): CredentialRedaction {
  const redaction = redactCredentials(text);
  if (redaction.kinds.length === 0 && text.length <= CLEAN_MEMO_MAX_LENGTH) cleanTexts.add(text);
  return redaction;
}

function assertStorable(name: string, value: string): void {
  const reason = weakSecretReason(value);
  if (reason === undefined) return;
  throw new VeridexError(
    'secret_too_weak',
    `Secret ${name} is too weak to be scrubbed in every process: ${reason}. Its fingerprint, stored in the database so that other processes can recognise it, would let anyone who reads the database test guesses offline. Use a generated secret (e.g. 32 random bytes, hex), or accept that only this process scrubs it: new AuditLog({ ..., secretFingerprints: { weakSecrets: 'process-only' } }).`,
    { details: { secret: name } },
  );
}

function remoteTarget(
  name: string,
  length: number,
  tag: number,
  hmac: string,
  key: Buffer,
): MatchTarget {
  return {
    name,
    length,
    tag,
    confirm: (window) => hmacSha256(key, window).toString('hex') === hmac,
  };
}

// The union of overlapping spans is replaced, under the name of the one that starts first.
function replaceSpans(text: string, spans: SecretSpan[], report: ScrubReport | undefined): string {
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  const edits = new TextEdits();
  let current: SecretSpan | undefined;
  const flush = () => {
    if (!current) return;
    edits.add(current.start, current.end - current.start, `[REDACTED:${current.name}]`);
    if (report && !report.secrets.includes(current.name)) report.secrets.push(current.name);
  };
  for (const span of spans) {
    if (current && span.start < current.end) {
      if (span.end > current.end) current = { ...current, end: span.end };
      continue;
    }
    flush();
    current = span;
  }
  flush();
  return edits.apply(text);
}

const hexValue = (code: number): number =>
  code >= 48 && code <= 57
    ? code - 48
    : (code | 32) >= 97 && (code | 32) <= 102
      ? (code | 32) - 87
      : -1;

/**
 * `text` with every `%XX` escape decoded (as one Latin-1 character; `+` stays, see secretForms),
 * with `map[i]` the index in `text` where view character i starts (`map[length]` = the end);
 * undefined when there is nothing to decode.
 */
function percentDecoded(text: string): { text: string; map: Int32Array } | undefined {
  const first = text.indexOf('%');
  if (first === -1) return undefined;
  // One pass into code units and the index map, then one string: building it from a slice
  // per escape cost ~70 ms per MB of escapes.
  const units = new Uint16Array(text.length);
  const map = new Int32Array(text.length + 1);
  let length = 0;
  for (let index = 0; index < first; index++) {
    units[length] = text.charCodeAt(index);
    map[length++] = index;
  }
  let decodedAny = false;
  let index = first;
  while (index < text.length) {
    const code = text.charCodeAt(index);
    if (code === 37) {
      const high = hexValue(text.charCodeAt(index + 1));
      const low = high === -1 ? -1 : hexValue(text.charCodeAt(index + 2));
      if (low !== -1) {
        units[length] = high * 16 + low;
        map[length++] = index;
        index += 3;
        decodedAny = true;
        continue;
      }
    }
    units[length] = code;
    map[length++] = index++;
  }
  if (!decodedAny) return undefined;
  map[length] = text.length;
  return { text: unitsToString(units, length), map: map.subarray(0, length + 1) };
}

/** The first `length` UTF-16 code units of `units` as a string, exactly (lone surrogates kept). */
function unitsToString(units: Uint16Array, length: number): string {
  return Buffer.from(units.buffer, units.byteOffset, length * 2).toString('utf16le');
}
