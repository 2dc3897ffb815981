import { timingSafeEqual } from 'node:crypto';
import type { z } from 'zod';
import { canonicalJson, decodeBase64Strict, hmacSha256 } from '../audit/index.js';
import type { VeridexError } from '../errors/index.js';
import {
  audienceFields,
  type ContextEnvelope,
  type EnvelopeAudience,
  type EnvelopeKey,
  type EnvelopeRejectionReason,
  envelopeError,
  envelopeFields,
  envelopeSigningInput,
  secretBytes,
} from './envelope.js';
import { encodingFor } from './model-limits.js';
import { type Tokenizer, tokenizerFor } from './tokenizer.js';

/** Options for {@link verifyEnvelope}. */
export interface VerifyEnvelopeOptions<Schema extends z.ZodType = z.ZodType> {
  /** Accepted keys; during a rotation list the old and the new one. */
  keys: readonly EnvelopeKey[];
  /**
   * Where the envelope is being received: the ledger (a string is shorthand for `{ ledger }`)
   * and, optionally, the receiving node. The envelope's audience must name this ledger, and
   * when it names a node, this node. `'any'` skips the check — only for tools that inspect
   * envelopes without acting on them; never at a boundary.
   */
  audience: EnvelopeAudience | string | 'any';
  /** The payload contract. Use `z.strictObject` to also refuse unexpected fields. */
  schema?: Schema;
  /** Top-level payload keys that must be present (not undefined). */
  requiredKeys?: readonly string[];
  /** The receiver's own token limit, checked besides the envelope's `tokenBudget`. */
  maxTokens?: number;
  /** Refuse envelopes older than this (or sealed more than a minute in the future). */
  maxAgeMs?: number;
  now?: () => Date;
  tokenizer?: Tokenizer;
}

/**
 * Result of {@link verifyEnvelope}: the typed payload, or why the envelope was refused.
 * `envelope` is exactly what was signed (safe to commit to a ledger); `payload` is the
 * schema's output (defaults applied, unknown keys stripped unless the schema is strict).
 */
export type EnvelopeVerification<Payload> =
  | { valid: true; envelope: ContextEnvelope<Payload>; payload: Payload; tokens: number }
  | { valid: false; reason: EnvelopeRejectionReason; message: string; error: VeridexError };

const CLOCK_SKEW_MS = 60_000;

/**
 * Checks a received envelope at an agent boundary, in this order: shape, key id, signature
 * (HMAC-SHA256, constant-time compare), audience, expiry, age, schema, required keys, token
 * budget. Never
 * throws on bad input: the result says `valid: false` with a reason code and a ready
 * `VeridexError('envelope_invalid')`.
 *
 * @throws VeridexError `signer_key_invalid` only for a configured key under 32 bytes.
 * @example
 * const result = verifyEnvelope(state.envelope, { keys: [key], audience: threadId, schema: Findings, maxTokens: 4000 });
 * if (!result.valid) throw result.error;
 */
export function verifyEnvelope<Schema extends z.ZodType>(
  envelope: unknown,
  options: VerifyEnvelopeOptions<Schema> & { schema: Schema },
): EnvelopeVerification<z.output<Schema>>;
export function verifyEnvelope<Payload = unknown>(
  envelope: unknown,
  options: VerifyEnvelopeOptions,
): EnvelopeVerification<Payload>;
export function verifyEnvelope(
  envelope: unknown,
  options: VerifyEnvelopeOptions,
): EnvelopeVerification<unknown> {
  if (!isEnvelopeShaped(envelope)) {
    return reject(
      'malformed',
      'The hand-off value is not a sealed envelope (expected version, timestamp, expiresAt, audience, tokenBudget, keyId, payload and a base64 signature).',
    );
  }
  const details = { version: envelope.version, keyId: envelope.keyId };
  const key = options.keys.find((candidate) => candidate.id === envelope.keyId);
  if (!key) {
    return reject(
      'unknown_key',
      `The envelope was signed with key "${envelope.keyId}", which is not among the accepted keys. Add it to keys (during a rotation keep the old and the new key).`,
      details,
    );
  }
  const given = decodeBase64Strict(envelope.signature);
  let expected: Buffer;
  try {
    expected = hmacSha256(secretBytes(key), envelopeSigningInput(envelope));
  } catch (error) {
    if ((error as VeridexError).code === 'signer_key_invalid') throw error;
    return reject('malformed', 'The envelope payload has no canonical JSON form.', details);
  }
  // Constant time, so a forger learns nothing from how long a wrong guess took.
  if (!given || given.length !== expected.length || !timingSafeEqual(expected, given)) {
    return reject(
      'signature_mismatch',
      `The signature of envelope version ${envelope.version} does not match its contents: it was changed after sealing or signed with another secret.`,
      details,
    );
  }
  if (options.audience !== 'any') {
    const expected = audienceFields(options.audience);
    const { ledger, node } = envelope.audience;
    if (ledger !== expected.ledger || (node !== undefined && node !== expected.node)) {
      return reject(
        'wrong_audience',
        `Envelope version ${envelope.version} was sealed for ledger "${ledger}"${node === undefined ? '' : ` and node "${node}"`}, not for ledger "${expected.ledger}"${expected.node === undefined ? '' : ` and node "${expected.node}"`}: a hand-off replayed from elsewhere is refused.`,
        { ...details, audience: envelope.audience },
      );
    }
  }
  const now = (options.now?.() ?? new Date()).getTime();
  if (now > Date.parse(envelope.expiresAt)) {
    return reject(
      'expired',
      `Envelope version ${envelope.version} expired at ${envelope.expiresAt}. Seal a fresh one (sealEnvelope ttlMs sets the lifetime).`,
      details,
    );
  }
  if (options.maxAgeMs !== undefined) {
    const age = now - Date.parse(envelope.timestamp);
    if (age > options.maxAgeMs || age < -CLOCK_SKEW_MS) {
      return reject(
        'expired',
        `Envelope version ${envelope.version} was sealed at ${envelope.timestamp}, outside the accepted age of ${options.maxAgeMs} ms.`,
        details,
      );
    }
  }
  let payload: unknown = envelope.payload;
  if (options.schema) {
    const parsed = options.schema.safeParse(payload);
    if (!parsed.success) {
      const issues = parsed.error.issues
        .slice(0, 5)
        .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
      return reject(
        'schema_mismatch',
        `The payload of envelope version ${envelope.version} does not match the schema: ${issues.join('; ')}.`,
        { ...details, issues },
      );
    }
    payload = parsed.data;
  }
  const missing = (options.requiredKeys ?? []).filter(
    (name) =>
      !isRecord(envelope.payload) ||
      (envelope.payload as Record<string, unknown>)[name] === undefined,
  );
  if (missing.length > 0) {
    return reject(
      'missing_keys',
      `The payload of envelope version ${envelope.version} lacks required keys: ${missing.join(', ')}.`,
      { ...details, missing },
    );
  }
  const tokenizer = options.tokenizer ?? tokenizerFor(encodingFor('gpt-4o').encoding);
  const tokens = tokenizer.count(canonicalJson(envelope.payload));
  const limit = Math.min(envelope.tokenBudget, options.maxTokens ?? Number.POSITIVE_INFINITY);
  if (tokens > limit) {
    return reject(
      'over_budget',
      `The payload of envelope version ${envelope.version} is ${tokens} tokens; the limit is ${limit} (envelope budget ${envelope.tokenBudget}${options.maxTokens === undefined ? '' : `, receiver maximum ${options.maxTokens}`}).`,
      { ...details, tokens, limit },
    );
  }
  // Only signed fields travel on (anything added in transit is dropped), and the payload stays
  // the signed one so the envelope can be committed and re-verified; `payload` is the parsed one.
  return { valid: true, envelope: envelopeFields(envelope), payload, tokens };
}

function reject(
  reason: EnvelopeRejectionReason,
  message: string,
  details: Record<string, unknown> = {},
): EnvelopeVerification<never> {
  return { valid: false, reason, message, error: envelopeError(reason, message, details) };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isEnvelopeShaped(value: unknown): value is ContextEnvelope {
  if (!isRecord(value)) return false;
  const { version, timestamp, expiresAt, audience, tokenBudget, keyId, signature, parents } = value;
  return (
    Number.isSafeInteger(version) &&
    (version as number) >= 0 &&
    typeof timestamp === 'string' &&
    !Number.isNaN(Date.parse(timestamp)) &&
    typeof expiresAt === 'string' &&
    !Number.isNaN(Date.parse(expiresAt)) &&
    isRecord(audience) &&
    typeof audience.ledger === 'string' &&
    (audience.node === undefined || typeof audience.node === 'string') &&
    Number.isSafeInteger(tokenBudget) &&
    (tokenBudget as number) > 0 &&
    typeof keyId === 'string' &&
    typeof signature === 'string' &&
    'payload' in value &&
    (parents === undefined ||
      (Array.isArray(parents) &&
        parents.every((parent) => Number.isSafeInteger(parent) && parent >= 0)))
  );
}
