import type { EventPayload } from './trace-event.js';

// A SHA-256 digest in hex, optionally behind our `idem_` prefix: fixed-format, computed by us.
const DIGEST = /^(?:idem_)?[0-9a-f]{64}$/;

/**
 * Splits the digest fields (`schemaHash`, `proposalHash`, `contentHash`, `idempotencyKey`, …:
 * SHA-256 hex the library computed) out of an event payload, to be stored `verbatim`: a digest
 * cannot hold a secret, and 64 hex characters are the credential scanner's costliest input
 * (they might be a private key), scanned on every governed call for nothing. Only values of
 * exactly that shape move; anything else in those fields is scrubbed as usual.
 *
 * @example audit.append({ ...input, ...verbatimDigests(payload, ['schemaHash']) })
 */
export function verbatimDigests(
  payload: EventPayload,
  fields: readonly string[],
): { payload: EventPayload; verbatim?: EventPayload } {
  let verbatim: EventPayload | undefined;
  let rest: EventPayload | undefined;
  // One pass over the payload's keys; a fresh object rather than `delete` (deleting keys puts
  // V8 objects in slow dictionary mode).
  for (const key of Object.keys(payload)) {
    const value = payload[key];
    if (typeof value === 'string' && fields.includes(key) && DIGEST.test(value)) {
      verbatim ??= {};
      verbatim[key] = value;
    } else {
      rest ??= {};
      rest[key] = value;
    }
  }
  return verbatim ? { payload: rest ?? {}, verbatim } : { payload };
}
