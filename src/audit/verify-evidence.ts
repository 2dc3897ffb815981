import { VeridexError } from '../errors/index.js';
import { decodeBase64Strict, preAuthEncoding } from './dsse.js';
import {
  countEventTypes,
  distinctRunIds,
  EVIDENCE_FORMAT,
  EVIDENCE_PAYLOAD_TYPE,
  type EvidenceBody,
} from './evidence-body.js';
import type { EvidenceVerifier } from './signer.js';
import type { TraceEvent } from './trace-event.js';
import { verifyChain } from './verify-chain.js';

/** How one signature of a bundle fared. */
export interface SignatureCheck {
  keyid: string;
  status: 'valid' | 'invalid' | 'unknown_key';
}

/** The outcome of {@link verifyEvidence}. */
export interface EvidenceVerification {
  /** True only when at least one signature verifies with a given key, none fails, and the body is intact. */
  valid: boolean;
  /** Why it is not valid, in the order found; empty when valid. */
  reasons: string[];
  signatures: SignatureCheck[];
  /** The decoded body when it could be decoded (even if invalid, for inspection). */
  body: EvidenceBody | undefined;
}

/** Options for {@link verifyEvidence}. */
export interface VerifyEvidenceOptions {
  /** Verifiers for the keys you trust (`new Ed25519Verifier(publicKey)`, an `HmacSigner`, …). */
  keys: readonly EvidenceVerifier[];
}

/**
 * Verifies a sealed evidence bundle offline. Detects any changed byte (strict base64, DSSE
 * signature), wrong or unknown keys, and events dropped, inserted, reordered or edited
 * (hash chain, head hash, counts). Never throws: garbage input yields `valid: false` with a reason.
 *
 * @example
 * const result = verifyEvidence(JSON.parse(text), { keys: [new Ed25519Verifier(publicKey)] });
 * if (!result.valid) console.error(result.reasons);
 */
export function verifyEvidence(
  bundle: unknown,
  options: VerifyEvidenceOptions,
): EvidenceVerification {
  const reasons: string[] = [];
  const signatures: SignatureCheck[] = [];
  const fail = (reason: string, body?: EvidenceBody): EvidenceVerification => ({
    valid: false,
    reasons: [...reasons, reason],
    signatures,
    body,
  });
  if (typeof bundle !== 'object' || bundle === null || Array.isArray(bundle)) {
    return fail('bundle is not a JSON object');
  }
  const envelope = bundle as Record<string, unknown>;
  if (envelope.payloadType !== EVIDENCE_PAYLOAD_TYPE) {
    return fail(`payloadType is not "${EVIDENCE_PAYLOAD_TYPE}"`);
  }
  if (typeof envelope.payload !== 'string') return fail('payload is missing');
  const payload = decodeBase64Strict(envelope.payload);
  if (!payload) return fail('payload is not canonical base64 (a byte was changed)');
  if (!Array.isArray(envelope.signatures) || envelope.signatures.length === 0) {
    return fail('bundle has no signatures');
  }

  const message = preAuthEncoding(EVIDENCE_PAYLOAD_TYPE, payload);
  for (const entry of envelope.signatures as unknown[]) {
    const { keyid, sig } = (entry ?? {}) as { keyid?: unknown; sig?: unknown };
    if (typeof keyid !== 'string' || typeof sig !== 'string') {
      reasons.push('a signature entry is malformed');
      continue;
    }
    const verifier = options.keys.find((key) => key.keyId === keyid);
    if (!verifier) {
      signatures.push({ keyid, status: 'unknown_key' });
      continue;
    }
    const signature = decodeBase64Strict(sig);
    const ok = signature !== undefined && verifier.verify(message, signature);
    signatures.push({ keyid, status: ok ? 'valid' : 'invalid' });
    if (!ok)
      reasons.push(`signature by ${keyid} does not verify (payload or signature was changed)`);
  }
  if (!signatures.some((check) => check.status === 'valid')) {
    const unknown = signatures
      .filter((check) => check.status === 'unknown_key')
      .map((check) => check.keyid);
    reasons.push(
      unknown.length > 0
        ? `no signature by a trusted key (signed by unknown key ${unknown.join(', ')})`
        : 'no valid signature by a trusted key',
    );
  }

  let body: EvidenceBody;
  try {
    body = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(payload)) as EvidenceBody;
  } catch {
    return fail('payload is not UTF-8 JSON');
  }
  reasons.push(...checkBody(body));
  return { valid: reasons.length === 0, reasons, signatures, body };
}

function checkBody(body: EvidenceBody): string[] {
  if (typeof body !== 'object' || body === null) return ['body is not an object'];
  if (body.format !== EVIDENCE_FORMAT) return [`body format is not "${EVIDENCE_FORMAT}"`];
  if (!Array.isArray(body.events)) return ['body has no events'];
  const problems: string[] = [];
  const events = body.events as TraceEvent[];
  const chain = verifyChain(events);
  if (!chain.valid) {
    problems.push(`event chain is broken at event ${chain.brokenAt}: ${chain.reason}`);
  } else {
    if (body.chain?.head !== chain.head) problems.push('chain head hash does not match the events');
    if (body.chain?.length !== chain.length)
      problems.push('chain length does not match the events');
  }
  if (events.some((event) => event?.threadId !== body.threadId)) {
    problems.push('an event belongs to another thread');
  }
  if (!sameCounts(body.counts, countEventTypes(events))) {
    problems.push('event counts do not match the events');
  }
  if (JSON.stringify(body.runIds) !== JSON.stringify(distinctRunIds(events))) {
    problems.push('run ids do not match the events');
  }
  return problems;
}

function sameCounts(claimed: unknown, actual: Record<string, number>): boolean {
  if (typeof claimed !== 'object' || claimed === null) return false;
  const entries = Object.entries(claimed as Record<string, unknown>);
  return (
    entries.length === Object.keys(actual).length &&
    entries.every(([type, count]) => actual[type] === count)
  );
}

/**
 * {@link verifyEvidence}, throwing when the bundle is not valid — for code paths that must
 * stop on bad evidence (an import, a payout release gated on an auditor's bundle).
 *
 * @throws VeridexError `evidence_invalid` with the reasons in the message and `details.reasons`.
 * @example const { body } = assertValidEvidence(bundle, { keys: [auditorKey] });
 */
export function assertValidEvidence(
  bundle: unknown,
  options: VerifyEvidenceOptions,
): EvidenceVerification & { body: EvidenceBody } {
  const result = verifyEvidence(bundle, options);
  if (!result.valid || !result.body) {
    throw new VeridexError(
      'evidence_invalid',
      `The evidence bundle does not verify: ${result.reasons.join('; ')}.`,
      {
        details: { reasons: result.reasons },
      },
    );
  }
  return result as EvidenceVerification & { body: EvidenceBody };
}
