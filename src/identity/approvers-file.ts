import type { TraceEvent } from '../audit/index.js';
import { VeridexError } from '../errors/index.js';
import type { Approver } from './approver.js';
import { canonicalIdentity } from './canonical-identity.js';

/** Format tag of an exported approver directory (`veridex approvers export`). */
export const APPROVERS_FORMAT = 'veridex.approvers/v1';

/**
 * The public approver directory as JSON, for auditors: ids, names, roles and public keys
 * (with revocation times), and, when given, the audit events of its changes (the hash-chained
 * `veridex.directory` thread: who added or revoked which key, with their proof). No secret.
 */
export function serializeApprovers(
  approvers: readonly Approver[],
  changes?: readonly TraceEvent[],
): string {
  return JSON.stringify(
    { format: APPROVERS_FORMAT, approvers, ...(changes ? { changes } : {}) },
    null,
    2,
  );
}

/**
 * The directory change events an exported directory carries (empty when it carries none).
 * Read them with `readDirectoryChanges`, which checks their chain and proofs.
 */
export function parseDirectoryChangeEvents(input: string | unknown): TraceEvent[] {
  const value = typeof input === 'string' ? (JSON.parse(input) as unknown) : input;
  const changes = (value as { changes?: unknown } | null)?.changes;
  return Array.isArray(changes) ? (changes as TraceEvent[]) : [];
}

/**
 * Reads an exported approver directory (the text of `approvers.json`, or its parsed value) —
 * the trust root `verifyEvidence({ approvers })` and `veridex verify --approvers` check every
 * decision signature against.
 *
 * @throws VeridexError `config_invalid` when it is not a `veridex.approvers/v1` document.
 */
export function parseApprovers(input: string | unknown): Approver[] {
  let value: unknown = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch {
      throw invalid('it is not JSON');
    }
  }
  const document = value as { format?: unknown; approvers?: unknown };
  if (document?.format !== APPROVERS_FORMAT || !Array.isArray(document.approvers)) {
    throw invalid(`expected { "format": "${APPROVERS_FORMAT}", "approvers": [...] }`);
  }
  return document.approvers.map((entry, index) => {
    const approver = entry as Partial<Approver>;
    if (typeof approver.id !== 'string' || !Array.isArray(approver.keys)) {
      throw invalid(`approver ${index} needs an id and keys`);
    }
    const keys = approver.keys.map((key) => {
      const base =
        typeof key?.keyId === 'string' && typeof key.publicKey === 'string' ? key : undefined;
      if (base?.type === 'ed25519') return base;
      if (
        base?.type === 'webauthn' &&
        typeof base.credentialId === 'string' &&
        typeof base.rpId === 'string' &&
        typeof base.algorithm === 'number'
      ) {
        return base;
      }
      throw invalid(
        `a key of approver "${approver.id}" is neither an ed25519 key with keyId and publicKey nor a webauthn key with keyId, publicKey, credentialId, rpId and algorithm`,
      );
    });
    return {
      id: canonicalIdentity(approver.id),
      displayName: typeof approver.displayName === 'string' ? approver.displayName : approver.id,
      roles: Array.isArray(approver.roles) ? approver.roles.map(String) : [],
      keys,
      addedAt: String(approver.addedAt ?? ''),
      ...(typeof approver.revokedAt === 'string' ? { revokedAt: approver.revokedAt } : {}),
    };
  });
}

function invalid(why: string): VeridexError {
  return new VeridexError(
    'config_invalid',
    `Not an approver directory: ${why}. Create one with \`veridex approvers export\`.`,
  );
}
