import { canonicalJson, encodeBase64, hmacSha256 } from '../audit/index.js';
import { VeridexError } from '../errors/index.js';
import {
  audienceFields,
  type ContextEnvelope,
  DEFAULT_ENVELOPE_TTL_MS,
  type EnvelopeAudience,
  type EnvelopeKey,
  envelopeSigningInput,
  secretBytes,
} from './envelope.js';
import { encodingFor } from './model-limits.js';
import { type Tokenizer, tokenizerFor } from './tokenizer.js';

/** Options for {@link sealEnvelope}. */
export interface SealEnvelopeOptions {
  /** Non-negative integer, higher than every version already in the receiving ledger. */
  version: number;
  /** Most tokens the payload may take; checked here and again by the receiver. */
  tokenBudget: number;
  key: EnvelopeKey;
  /**
   * Where the envelope may be received: the receiving ledger (by default the thread id — a
   * string is shorthand for `{ ledger }`), and optionally the one node that may receive it.
   * A receiver elsewhere refuses it (`wrong_audience`), so it cannot be replayed into
   * another thread.
   */
  audience: EnvelopeAudience | string;
  /** How long receivers accept it. Default {@link DEFAULT_ENVELOPE_TTL_MS} (15 minutes). */
  ttlMs?: number;
  /** Versions this envelope derives from (kept by ledger pruning while it is kept). */
  parents?: readonly number[];
  /** Default: the system clock. */
  now?: () => Date;
  /** Counts the payload's tokens. Default o200k (`gpt-tokenizer`). */
  tokenizer?: Tokenizer;
}

/**
 * Wraps `payload` in a signed {@link ContextEnvelope}: HMAC-SHA256 under `key` over the
 * canonical JSON of version, timestamp, expiry, audience, token budget, key id, parents and
 * payload.
 *
 * @throws VeridexError `config_invalid` for a bad version, budget, audience or lifetime; `signer_key_invalid` for a
 * key under 32 bytes; `canonical_json_invalid` for a payload with no JSON form;
 * `context_budget_exceeded` when the payload is over its own token budget.
 * @example
 * const envelope = sealEnvelope({ entities: ['Acme'], summary: '…' }, { version: 1, tokenBudget: 4000, key, audience: threadId });
 */
export function sealEnvelope<Payload>(
  payload: Payload,
  options: SealEnvelopeOptions,
): ContextEnvelope<Payload> {
  const { version, tokenBudget, key } = options;
  if (!Number.isSafeInteger(version) || version < 0) {
    throw new VeridexError(
      'config_invalid',
      `Envelope version must be a non-negative integer; got ${version}.`,
    );
  }
  if (!Number.isSafeInteger(tokenBudget) || tokenBudget <= 0) {
    throw new VeridexError(
      'config_invalid',
      `tokenBudget must be a positive integer; got ${tokenBudget}.`,
    );
  }
  const audience = audienceFields(options.audience);
  if (
    typeof audience.ledger !== 'string' ||
    audience.ledger === '' ||
    (audience.node !== undefined && (typeof audience.node !== 'string' || audience.node === ''))
  ) {
    throw new VeridexError(
      'config_invalid',
      'An envelope needs an audience: the receiving ledger id (usually the thread id), e.g. { audience: threadId } or { audience: { ledger: threadId, node: "receive" } }.',
    );
  }
  const ttlMs = options.ttlMs ?? DEFAULT_ENVELOPE_TTL_MS;
  if (!Number.isSafeInteger(ttlMs) || ttlMs <= 0) {
    throw new VeridexError('config_invalid', `ttlMs must be a positive integer; got ${ttlMs}.`);
  }
  const secret = secretBytes(key);
  const tokenizer = options.tokenizer ?? tokenizerFor(encodingFor('gpt-4o').encoding);
  const tokens = tokenizer.count(canonicalJson(payload));
  if (tokens > tokenBudget) {
    throw new VeridexError(
      'context_budget_exceeded',
      `The hand-off payload is ${tokens} tokens but its budget is ${tokenBudget}. Trim the payload (drop or summarise fields) or raise tokenBudget.`,
      { details: { tokens, tokenBudget, version } },
    );
  }
  const sealedAt = options.now?.() ?? new Date();
  const unsigned = {
    version,
    timestamp: sealedAt.toISOString(),
    expiresAt: new Date(sealedAt.getTime() + ttlMs).toISOString(),
    audience,
    tokenBudget,
    keyId: key.id,
    payload,
    ...(options.parents === undefined ? {} : { parents: [...options.parents] }),
  };
  const signature = encodeBase64(hmacSha256(secret, envelopeSigningInput(unsigned)));
  return { ...unsigned, signature };
}
