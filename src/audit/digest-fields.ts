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
  for (const field of fields) {
    const value = payload[field];
    if (typeof value !== 'string' || !DIGEST.test(value)) continue;
    verbatim ??= {};
    verbatim[field] = value;
  }
  if (!verbatim) return { payload };
  // A fresh object rather than `delete`: deleting keys puts V8 objects in slow dictionary mode.
  const rest: EventPayload = {};
  for (const key of Object.keys(payload)) if (!(key in verbatim)) rest[key] = payload[key];
  return { payload: rest, verbatim };
}
