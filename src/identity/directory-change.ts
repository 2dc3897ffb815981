import {
  canonicalJson,
  Ed25519Signer,
  ed25519KeyId,
  preAuthEncoding,
  sha256Hex,
  verifyEd25519,
} from '../audit/index.js';
import { checkWebAuthnAssertion, webauthnKeyId } from '../audit/webauthn-assertion.js';

/** DSSE payload type of a directory change statement: never a decision or a sign-in. */
export const DIRECTORY_CHANGE_PAYLOAD_TYPE = 'application/vnd.veridex.directory-change+json';

/** What a directory change does. */
export type DirectoryChangeKind =
  | 'approver_added'
  | 'approver_revoked'
  | 'key_added'
  | 'key_revoked'
  // An operator sealed rows as they stood in the database (`veridex approvers seal`).
  | 'entry_sealed';

/**
 * What an approver signs to consent to a change of their own entry (README "Approvals inbox",
 * enrolment): the change, whose entry, which key, for which service, over a one-use challenge
 * the service issued for exactly this enrolment.
 */
export interface DirectoryChangeStatement {
  change: DirectoryChangeKind;
  approver: string;
  keyId: string;
  audience: string;
  challenge: string;
}

/**
 * A credential's signature over a {@link DirectoryChangeStatement}: Ed25519 (base64 signature
 * over {@link directoryChangeMessage}), or a passkey assertion (base64url parts) whose challenge
 * is {@link directoryChangeChallenge}.
 */
export interface DirectoryChangeProof {
  keyId: string;
  signature: string;
  webauthn?: { authenticatorData: string; clientDataJSON: string };
}

/** The public half of the key that made a proof, as the audit record keeps it for verifiers. */
export interface ProvingKey {
  type: 'ed25519' | 'webauthn';
  keyId: string;
  publicKey: string;
  credentialId?: string;
  rpId?: string;
}

/** The statement with exactly its five fields (extra fields are never signed). */
function exact(statement: DirectoryChangeStatement): DirectoryChangeStatement {
  return {
    change: statement.change,
    approver: statement.approver,
    keyId: statement.keyId,
    audience: statement.audience,
    challenge: statement.challenge,
  };
}

/** The bytes a change proof covers: DSSE PAE of the statement's RFC 8785 JSON. */
export function directoryChangeMessage(statement: DirectoryChangeStatement): Uint8Array {
  return preAuthEncoding(
    DIRECTORY_CHANGE_PAYLOAD_TYPE,
    new TextEncoder().encode(canonicalJson(exact(statement))),
  );
}

/** The WebAuthn challenge of a change statement: SHA-256 of its signing message, base64url. */
export function directoryChangeChallenge(statement: DirectoryChangeStatement): string {
  return Buffer.from(sha256Hex(directoryChangeMessage(statement)), 'hex').toString('base64url');
}

/**
 * Signs a change statement with an Ed25519 approver key (what an API client does to consent to
 * a passkey being added to its own entry).
 *
 * @example
 * const proof = signDirectoryChange(statement, bobPrivateKey);
 */
export function signDirectoryChange(
  statement: DirectoryChangeStatement,
  key: Uint8Array | Ed25519Signer,
): DirectoryChangeProof {
  const signer = key instanceof Ed25519Signer ? key : new Ed25519Signer(key);
  return {
    keyId: signer.keyId,
    signature: Buffer.from(signer.sign(directoryChangeMessage(statement))).toString('base64'),
  };
}

/**
 * Checks a change proof offline against the key that made it: the key id is that key's, and
 * the signature (or passkey assertion, user verified) covers exactly `statement`. Returns the
 * problem, or `undefined` when it verifies. Never throws.
 */
export function checkDirectoryChangeProof(
  statement: DirectoryChangeStatement,
  proof: DirectoryChangeProof,
  key: ProvingKey,
): string | undefined {
  try {
    if (proof.keyId !== key.keyId) return `the proof names key ${proof.keyId}, not ${key.keyId}`;
    if (key.type === 'ed25519') {
      if (ed25519KeyId(Buffer.from(key.publicKey, 'base64')) !== key.keyId) {
        return `the public key is not key ${key.keyId}`;
      }
      return verifyEd25519(key.publicKey, directoryChangeMessage(statement), proof.signature)
        ? undefined
        : `the signature by ${key.keyId} does not verify`;
    }
    if (!proof.webauthn || key.credentialId === undefined || key.rpId === undefined) {
      return 'the passkey proof is incomplete';
    }
    if (webauthnKeyId(key.credentialId) !== key.keyId) {
      return `the credential is not key ${key.keyId}`;
    }
    const check = checkWebAuthnAssertion(
      { ...proof.webauthn, signature: proof.signature },
      { publicKey: key.publicKey, rpId: key.rpId, challenge: directoryChangeChallenge(statement) },
    );
    return check.ok ? undefined : `the passkey assertion does not verify: ${check.problem}`;
  } catch {
    return 'the proof is malformed';
  }
}

/** A proof value from a request, shape-checked. @returns `undefined` when it is not one. */
export function parseDirectoryChangeProof(value: unknown): DirectoryChangeProof | undefined {
  const proof = value as Partial<DirectoryChangeProof> | null;
  if (
    typeof proof !== 'object' ||
    proof === null ||
    typeof proof.keyId !== 'string' ||
    proof.keyId.length > 200 ||
    typeof proof.signature !== 'string' ||
    proof.signature.length > 2048
  ) {
    return undefined;
  }
  const webauthn = proof.webauthn;
  if (webauthn === undefined) return { keyId: proof.keyId, signature: proof.signature };
  if (
    typeof webauthn !== 'object' ||
    webauthn === null ||
    typeof webauthn.authenticatorData !== 'string' ||
    webauthn.authenticatorData.length > 4096 ||
    typeof webauthn.clientDataJSON !== 'string' ||
    webauthn.clientDataJSON.length > 16_384
  ) {
    return undefined;
  }
  return {
    keyId: proof.keyId,
    signature: proof.signature,
    webauthn: {
      authenticatorData: webauthn.authenticatorData,
      clientDataJSON: webauthn.clientDataJSON,
    },
  };
}
