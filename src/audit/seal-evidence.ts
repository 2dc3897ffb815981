import { VeridexError } from '../errors/index.js';
import { canonicalJson } from './canonical-json.js';
import { type DsseEnvelope, encodeBase64, preAuthEncoding } from './dsse.js';
import {
  countEventTypes,
  distinctRunIds,
  EVIDENCE_FORMAT,
  EVIDENCE_PAYLOAD_TYPE,
  type EvidenceBody,
} from './evidence-body.js';
import type { EvidenceSigner } from './signer.js';
import type { TraceEvent } from './trace-event.js';
import { verifyChain } from './verify-chain.js';

/** A signed evidence bundle: a DSSE envelope whose payload is an {@link EvidenceBody}. */
export type EvidenceBundle = DsseEnvelope;

/** What to seal. */
export interface SealEvidenceInput {
  threadId: string;
  /** The thread's complete chain, from its first event (e.g. `await audit.events(threadId)`). */
  events: readonly TraceEvent[];
  subject?: Record<string, unknown>;
  extra?: Record<string, unknown>;
  /** Default: the last event's timestamp (so equal input seals to an identical bundle). */
  createdAt?: string;
}

/**
 * Seals a thread's events into a signed evidence bundle anyone can verify offline with
 * {@link verifyEvidence} or `veridex verify`. The body is canonical JSON (RFC 8785); every
 * signer signs DSSE's pre-authentication encoding of it (e.g. agent key + counter-signer).
 *
 * @throws VeridexError `audit_chain_broken` if `events` are not an intact chain of `threadId`;
 *   `config_invalid` without signers.
 * @example
 * const bundle = sealEvidence({ threadId, events: await audit.events(threadId) }, [signer]);
 * writeFileSync(`${threadId}.json`, JSON.stringify(bundle));
 */
export function sealEvidence(
  input: SealEvidenceInput,
  signers: readonly EvidenceSigner[],
): EvidenceBundle {
  if (signers.length === 0) {
    throw new VeridexError(
      'config_invalid',
      'sealEvidence needs at least one signer (Ed25519Signer or HmacSigner).',
    );
  }
  // Links only: the store hashed these events, and every verifier recomputes the hashes.
  const chain = verifyChain(input.events, { recomputeHashes: false });
  if (!chain.valid) {
    throw new VeridexError(
      'audit_chain_broken',
      `Refusing to seal thread "${input.threadId}": event ${chain.brokenAt} breaks the chain (${chain.reason}).`,
      { details: { threadId: input.threadId, brokenAt: chain.brokenAt } },
    );
  }
  const foreign = input.events.find((event) => event.threadId !== input.threadId);
  if (foreign) {
    throw new VeridexError(
      'audit_chain_broken',
      `Refusing to seal thread "${input.threadId}": it contains events of thread "${foreign.threadId}".`,
    );
  }
  const body: EvidenceBody = {
    format: EVIDENCE_FORMAT,
    threadId: input.threadId,
    runIds: distinctRunIds(input.events),
    createdAt: input.createdAt ?? input.events.at(-1)?.timestamp ?? new Date(0).toISOString(),
    ...(input.subject ? { subject: input.subject } : {}),
    ...(input.extra ? { extra: input.extra } : {}),
    chain: { length: chain.length, head: chain.head },
    counts: countEventTypes(input.events),
    events: [...input.events],
  };
  const payload = new TextEncoder().encode(canonicalJson(body));
  const message = preAuthEncoding(EVIDENCE_PAYLOAD_TYPE, payload);
  return {
    payloadType: EVIDENCE_PAYLOAD_TYPE,
    payload: encodeBase64(payload),
    signatures: signers.map((signer) => ({
      keyid: signer.keyId,
      sig: encodeBase64(signer.sign(message)),
    })),
  };
}
