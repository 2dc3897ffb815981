import type { EventPayload } from './trace-event.js';

// A SHA-256 digest in hex, optionally behind our `idem_` prefix: fixed-format, computed by us.
const DIGEST = /^(?:idem_)?[0-9a-f]{64}$/;

/** True when `value` has the shape of a digest the library computes (64 hex, maybe `idem_`). */
export function isDigest(value: unknown): value is string {
  return typeof value === 'string' && DIGEST.test(value);
}

/**
 * Names the digest fields (`schemaHash`, `proposalHash`, `contentHash`, `idempotencyKey`, …:
 * SHA-256 hex the library computed) of an event payload, so that the audit log stores them as
 * given: a digest cannot hold a secret, and 64 hex characters are the credential scanner's
 * costliest input (they might be a private key), scanned on every governed call for nothing.
 * Only values of exactly a digest's shape are kept as given; anything else in those fields is
 * scrubbed as usual.
 *
 * @example audit.append({ ...input, ...verbatimDigests(payload, ['schemaHash']) })
 */
export function verbatimDigests(
  payload: EventPayload,
  fields: readonly string[],
): { payload: EventPayload; digests: readonly string[] } {
  return { payload, digests: fields };
}
