import { ed25519KeyId } from '../audit/ed25519-signer.js';
import { readPublicKey } from '../audit/key-files.js';
import { webauthnKeyId } from '../audit/webauthn-assertion.js';
import { VeridexError } from '../errors/index.js';
import type { Approver, ApproverInit, ApproverKey, PasskeyInit } from './approver.js';
import { canonicalIdentity, sameIdentity } from './canonical-identity.js';

/**
 * Who may decide approvals, and with which keys. Lookups compare identities by
 * `identityKey`, so `Alice`, `alice ` and Cyrillic `аlice` are one entry; registering a second
 * approver whose name is confusable with an existing one is refused (`identity_ambiguous`).
 * `MemoryApproverDirectory` holds it in the process; `PostgresApproverDirectory` in the
 * database, where `veridex approvers add|list|revoke` edits it.
 */
export interface ApproverDirectory {
  /** The approver named `id` (any spelling with the same identity key), revoked ones included. */
  get(id: string): Promise<Approver | undefined>;
  /** The approver holding the key `keyId`, and that key (revoked ones included). */
  findByKey(keyId: string): Promise<{ approver: Approver; key: ApproverKey } | undefined>;
  /** Every approver, by id. */
  list(): Promise<Approver[]>;
  /**
   * Registers an approver. @throws VeridexError `identity_ambiguous` when the id (or a key) is
   * already taken by, or confusable with, another approver; `identity_invalid` for a bad id.
   */
  add(init: ApproverInit): Promise<Approver>;
  /**
   * Adds a key to an approver: an Ed25519 public key, or a passkey the inbox registered.
   * @throws VeridexError `approver_unknown`, `identity_ambiguous`.
   */
  addKey(
    id: string,
    publicKey: Uint8Array | string | PasskeyInit,
    options?: { sponsor?: string },
  ): Promise<Approver>;
  /**
   * Revokes an approver — and with it each of its keys, and every other approver's key it
   * sponsors (README "One admin, one vote": whoever opened her invitation may be her) — or only
   * one of its keys: decisions not yet counted that were signed with them are refused from then
   * on. Use {@link sponsoredKeys} first to record what the cascade revokes.
   * @throws VeridexError `approver_unknown`.
   */
  revoke(id: string, options?: { keyId?: string }): Promise<Approver>;
}

/** The approver {@link ApproverInit} describes, in canonical form, with its keys. */
export function buildApprover(init: ApproverInit, now: Date): Approver {
  const id = canonicalIdentity(init.id);
  const addedAt = now.toISOString();
  const keys = (init.publicKeys ?? []).map((publicKey) => buildKey(publicKey, addedAt));
  const seen = new Set<string>();
  for (const key of keys) {
    if (seen.has(key.keyId)) throw ambiguous(`key ${key.keyId} is listed twice for "${id}"`);
    seen.add(key.keyId);
  }
  return {
    id,
    displayName: (init.displayName ?? init.id).trim() || id,
    roles: [...new Set((init.roles ?? []).map((role) => canonicalIdentity(role)))],
    keys,
    addedAt,
  };
}

/** A directory key: Ed25519 from raw bytes or PEM/hex/base64 text, or a registered passkey. */
export function buildKey(
  publicKey: Uint8Array | string | PasskeyInit,
  addedAt: string,
  sponsor?: string,
): ApproverKey {
  const key = buildKeyMaterial(publicKey, addedAt);
  return sponsor === undefined ? key : { ...key, sponsor: canonicalIdentity(sponsor) };
}

function buildKeyMaterial(
  publicKey: Uint8Array | string | PasskeyInit,
  addedAt: string,
): ApproverKey {
  if (typeof publicKey === 'object' && !(publicKey instanceof Uint8Array)) {
    return buildPasskey(publicKey, addedAt);
  }
  const raw = typeof publicKey === 'string' ? readPublicKey(publicKey) : publicKey;
  if (!(raw instanceof Uint8Array) || raw.length !== 32) {
    throw new VeridexError(
      'signer_key_invalid',
      'An approver key must be a 32-byte Ed25519 public key (raw bytes, PEM, hex or base64).',
    );
  }
  return {
    type: 'ed25519',
    keyId: ed25519KeyId(raw),
    publicKey: Buffer.from(raw).toString('base64'),
    addedAt,
  };
}

/** `identity_ambiguous` with `why`. */
export function ambiguous(why: string): VeridexError {
  return new VeridexError(
    'identity_ambiguous',
    `Refused: ${why}. Each approver needs a name and keys no one else has.`,
  );
}

/** `approver_unknown` for `id`. */
export function unknownApprover(id: string): VeridexError {
  return new VeridexError(
    'approver_unknown',
    `No approver "${id.slice(0, 80)}" in the directory. Register one with \`veridex approvers add\` (or ApprovalManager({ approvers })).`,
  );
}

function buildPasskey(init: PasskeyInit, addedAt: string): ApproverKey {
  const publicKey =
    typeof init.publicKey === 'string'
      ? init.publicKey
      : Buffer.from(init.publicKey).toString('base64');
  if (
    typeof init.credentialId !== 'string' ||
    !/^[A-Za-z0-9_-]{16,1366}$/.test(init.credentialId) ||
    typeof init.rpId !== 'string' ||
    init.rpId === '' ||
    !Number.isInteger(init.algorithm) ||
    publicKey.length === 0 ||
    (init.origins !== undefined && !validOrigins(init.origins))
  ) {
    throw new VeridexError(
      'signer_key_invalid',
      'A passkey needs a base64url credential id, its relying party id, a COSE algorithm and a COSE public key (and its origins, if given, as 1 to 8 web origins such as https://inbox.corp.example).',
    );
  }
  return {
    type: 'webauthn',
    keyId: webauthnKeyId(init.credentialId),
    publicKey,
    credentialId: init.credentialId,
    rpId: init.rpId,
    algorithm: init.algorithm,
    ...(init.transports ? { transports: [...init.transports].map(String).slice(0, 8) } : {}),
    ...(init.origins ? { origins: [...init.origins] } : {}),
    addedAt,
  };
}

/**
 * The active keys, of other approvers, that `sponsor` sponsors: revoking `sponsor` revokes them
 * too. Keys an operator added (`veridex approvers add-key`) have no sponsor and are kept.
 */
export function sponsoredKeys(
  approvers: readonly Approver[],
  sponsor: string,
): Array<{ approver: Approver; key: ApproverKey }> {
  const found: Array<{ approver: Approver; key: ApproverKey }> = [];
  for (const approver of approvers) {
    if (sameIdentity(approver.id, sponsor)) continue;
    for (const key of approver.keys) {
      if (key.revokedAt !== undefined || key.sponsor === undefined) continue;
      if (sameIdentity(key.sponsor, sponsor)) found.push({ approver, key });
    }
  }
  return found;
}

/** 1 to 8 web origins, each exactly as `URL.origin` serialises it (scheme, host, port). */
function validOrigins(origins: unknown): boolean {
  if (!Array.isArray(origins) || origins.length === 0 || origins.length > 8) return false;
  return origins.every((origin) => {
    if (typeof origin !== 'string' || origin.length > 512) return false;
    try {
      const url = new URL(origin);
      return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === origin;
    } catch {
      return false;
    }
  });
}
