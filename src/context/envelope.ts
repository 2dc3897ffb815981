import { canonicalJson, MIN_HMAC_SECRET_BYTES } from '../audit/index.js';
import { VeridexError } from '../errors/index.js';

/**
 * Who an envelope is for: the ledger (by default the thread id) that may commit it and,
 * optionally, the one graph node that may receive it. An envelope presented anywhere else —
 * replayed into another thread, another ledger or another node — is refused.
 */
export interface EnvelopeAudience {
  ledger: string;
  /** The receiving node's name (`config.metadata.langgraph_node`); any node of the ledger when absent. */
  node?: string;
}

/** Lifetime of an envelope when `sealEnvelope` is given no `ttlMs`: 15 minutes. */
export const DEFAULT_ENVELOPE_TTL_MS = 15 * 60_000;

/**
 * A payload handed from one agent (or subgraph) to the next, bound by HMAC-SHA256 to its
 * version, time, expiry, audience, token budget and signing key: changing any of them breaks
 * the signature.
 */
export interface ContextEnvelope<Payload = unknown> {
  /** Monotonic per ledger; lets a receiver roll back to the last valid version. */
  version: number;
  /** ISO 8601 UTC time of sealing. */
  timestamp: string;
  /** ISO 8601 UTC time after which no receiver accepts it. */
  expiresAt: string;
  /** Where it may be received. */
  audience: EnvelopeAudience;
  /** Most tokens the payload may take (counted as canonical JSON). */
  tokenBudget: number;
  /** Which shared secret signed it (several may be accepted during a rotation). */
  keyId: string;
  payload: Payload;
  /** Versions this one was derived from (a fork-join merge names its snapshot). */
  parents?: number[];
  /** Standard base64 of HMAC-SHA256 over {@link envelopeSigningInput}. */
  signature: string;
}

/** A named HMAC secret; at least 32 bytes (RFC 2104 §3: no shorter than the hash output). */
export interface EnvelopeKey {
  id: string;
  secret: string | Uint8Array;
}

/** Why {@link verifyEnvelope} or a ledger refused an envelope (`details.reason` of `envelope_invalid`). */
export type EnvelopeRejectionReason =
  | 'malformed'
  | 'unknown_key'
  | 'signature_mismatch'
  | 'schema_mismatch'
  | 'missing_keys'
  | 'over_budget'
  | 'expired'
  | 'wrong_audience'
  | 'version_conflict'
  | 'version_not_monotonic'
  | 'merge_conflict';

/**
 * Domain separator inside the signed bytes, so an envelope MAC is never valid as another MAC.
 * v2 added the audience and the expiry; a v1 envelope (bound to neither) does not verify.
 */
export const ENVELOPE_FORMAT = 'veridex.envelope/v2';

/**
 * The exact bytes an envelope's HMAC covers: the RFC 8785 canonical JSON of every field but
 * `signature`, plus the format label. Canonical, so field order and whitespace in transit
 * cannot change it.
 */
export function envelopeSigningInput(envelope: Omit<ContextEnvelope, 'signature'>): string {
  return canonicalJson({
    format: ENVELOPE_FORMAT,
    version: envelope.version,
    timestamp: envelope.timestamp,
    expiresAt: envelope.expiresAt,
    audience: audienceFields(envelope.audience),
    tokenBudget: envelope.tokenBudget,
    keyId: envelope.keyId,
    payload: envelope.payload,
    ...(envelope.parents === undefined ? {} : { parents: envelope.parents }),
  });
}

/** The envelope's own fields only (anything else a transport added is dropped). */
export function envelopeFields<Payload>(
  envelope: ContextEnvelope<Payload>,
): ContextEnvelope<Payload> {
  return {
    version: envelope.version,
    timestamp: envelope.timestamp,
    expiresAt: envelope.expiresAt,
    audience: audienceFields(envelope.audience),
    tokenBudget: envelope.tokenBudget,
    keyId: envelope.keyId,
    payload: envelope.payload,
    ...(envelope.parents === undefined ? {} : { parents: [...envelope.parents] }),
    signature: envelope.signature,
  };
}

/** An audience's own fields; a string is shorthand for `{ ledger }`. */
export function audienceFields(audience: EnvelopeAudience | string): EnvelopeAudience {
  if (typeof audience === 'string') return { ledger: audience };
  return {
    ledger: audience.ledger,
    ...(audience.node === undefined ? {} : { node: audience.node }),
  };
}

/** The key's secret as bytes. @throws VeridexError `signer_key_invalid` when it is too short. */
export function secretBytes(key: EnvelopeKey): Uint8Array {
  const bytes = typeof key.secret === 'string' ? new TextEncoder().encode(key.secret) : key.secret;
  if (bytes.length < MIN_HMAC_SECRET_BYTES) {
    throw new VeridexError(
      'signer_key_invalid',
      `Envelope key "${key.id}" is ${bytes.length} bytes; an HMAC-SHA256 secret must be at least ${MIN_HMAC_SECRET_BYTES}. Generate one with: node -e "console.log(require('crypto').randomBytes(32).toString('hex'))"`,
      { details: { keyId: key.id } },
    );
  }
  return bytes;
}

/** A `VeridexError('envelope_invalid')` carrying the reason code. */
export function envelopeError(
  reason: EnvelopeRejectionReason,
  message: string,
  details: Record<string, unknown> = {},
): VeridexError {
  return new VeridexError('envelope_invalid', message, { details: { reason, ...details } });
}
