import { createPublicKey, type JsonWebKey, type KeyObject, verify } from 'node:crypto';
import { decodeCBOR } from '@levischuck/tiny-cbor';
import type { DecisionStatement } from './decision-statement.js';
import { decisionSigningMessage } from './decision-statement.js';
import { sha256Hex } from './sha256.js';

/**
 * The parts of a WebAuthn assertion (`navigator.credentials.get`) a verifier needs, each
 * base64url as the browser reports them.
 */
export interface WebAuthnAssertion {
  authenticatorData: string;
  clientDataJSON: string;
  signature: string;
}

/** What a passkey-signed decision must be checked against. */
export interface WebAuthnExpectation {
  /** The credential's COSE public key, base64 (as the approver directory stores it). */
  publicKey: string;
  /** The relying party id the passkey is registered for (e.g. `inbox.corp.example`). */
  rpId: string;
  /** The base64url challenge the assertion must be over. */
  challenge: string;
  /** Whether the authenticator must have verified the user (PIN, biometrics). Default true. */
  requireUserVerification?: boolean;
  /**
   * The web origins the assertion must have been made on (`clientData.origin`, exactly). A
   * passkey answers any page of its relying party's host — another port, or plain http — so a
   * decision checked without its origins is a signature by the device, not a choice made in the
   * inbox. Absent: the origin is only reported (enrolment proofs of the directory history).
   */
  origins?: readonly string[];
}

/** What {@link checkWebAuthnAssertion} found: the problem, or the origin the browser reported. */
export type WebAuthnCheck =
  | { ok: true; origin: string; counter: number }
  | { ok: false; problem: string };

/** The directory key id of a passkey: `webauthn:` + 32 hex digits of SHA-256(credential id bytes). */
export function webauthnKeyId(credentialId: string): string {
  return `webauthn:${sha256Hex(Buffer.from(credentialId, 'base64url')).slice(0, 32)}`;
}

/** COSE algorithms accepted for passkeys: EdDSA, ES256, RS256. */
export const PASSKEY_ALGORITHMS = [-8, -7, -257] as const;

/**
 * The WebAuthn challenge of a decision statement: SHA-256 of the same DSSE pre-authentication
 * encoding an Ed25519 approver key signs, base64url. A passkey assertion over this challenge is
 * a signature over exactly this statement — approval id, proposal hash, decision, edit and
 * reason hashes, approver, time and nonce.
 */
export function decisionChallenge(statement: DecisionStatement): string {
  return Buffer.from(sha256Hex(decisionSigningMessage(statement)), 'hex').toString('base64url');
}

/**
 * Verifies a WebAuthn assertion offline (WebAuthn Level 3 §7.2, the steps that need no server
 * state): client data of type `webauthn.get` over `challenge`, authenticator data for the
 * relying party `rpId` with user presence (and verification, unless turned off), and the
 * signature over authenticator data ‖ SHA-256(client data) under the COSE key. Synchronous and
 * dependency-light, so `verifyEvidence` can run it. With `origins`, the origin the browser
 * reported must be one of them; an assertion from a cross-origin frame is always refused. The
 * service additionally checks its challenge and the signature counter with
 * `@simplewebauthn/server`.
 */
export function checkWebAuthnAssertion(
  assertion: WebAuthnAssertion,
  expected: WebAuthnExpectation,
): WebAuthnCheck {
  const fail = (problem: string): WebAuthnCheck => ({ ok: false, problem });
  const clientData = base64url(assertion.clientDataJSON);
  const authenticatorData = base64url(assertion.authenticatorData);
  const signature = base64url(assertion.signature);
  if (!clientData || !authenticatorData || !signature)
    return fail('the assertion is not base64url');
  let client: {
    type?: unknown;
    challenge?: unknown;
    origin?: unknown;
    crossOrigin?: unknown;
    topOrigin?: unknown;
  };
  try {
    client = JSON.parse(clientData.toString('utf8'));
  } catch {
    return fail('the client data is not JSON');
  }
  if (client.type !== 'webauthn.get') return fail('the client data is not of an assertion');
  if (client.challenge !== expected.challenge) {
    return fail('the assertion was made over another challenge (another statement)');
  }
  if (typeof client.origin !== 'string') return fail('the client data names no origin');
  // WebAuthn §7.2 steps 9-10: the origin the browser reports, and no assertion from a frame of
  // another site (crossOrigin true, or a topOrigin, which browsers send only for such frames).
  if (client.crossOrigin === true || client.topOrigin !== undefined) {
    return fail(`the assertion was made in a frame embedded by another site (${client.origin})`);
  }
  if (expected.origins !== undefined && !expected.origins.includes(client.origin)) {
    return fail(
      `the assertion was made on ${client.origin.slice(0, 200)}, not on ${expected.origins.join(' or ') || 'an origin the passkey records'}`,
    );
  }
  if (authenticatorData.length < 37) return fail('the authenticator data is truncated');
  const rpIdHash = authenticatorData.subarray(0, 32).toString('hex');
  if (rpIdHash !== sha256Hex(expected.rpId)) {
    return fail(`the assertion is for another relying party than ${expected.rpId}`);
  }
  const flags = authenticatorData[32]!;
  if ((flags & 0x01) === 0) return fail('the authenticator did not confirm user presence');
  if (expected.requireUserVerification !== false && (flags & 0x04) === 0) {
    return fail('the authenticator did not verify the user');
  }
  const key = coseKey(expected.publicKey);
  if (!key) return fail('the public key is not a supported COSE key');
  const signed = Buffer.concat([authenticatorData, Buffer.from(sha256Hex(clientData), 'hex')]);
  let valid = false;
  try {
    valid = verify(key.algorithm === -8 ? null : 'sha256', signed, key.key, signature);
  } catch {
    valid = false;
  }
  if (!valid) return fail('the passkey signature does not verify');
  return { ok: true, origin: client.origin, counter: authenticatorData.readUInt32BE(33) };
}

const keys = new Map<string, { key: KeyObject; algorithm: number } | undefined>();

/** A node:crypto key from a base64 COSE_Key (OKP Ed25519, EC2 P-256, RSA), cached. */
export function coseKey(
  publicKeyBase64: string,
): { key: KeyObject; algorithm: number } | undefined {
  if (keys.has(publicKeyBase64)) return keys.get(publicKeyBase64);
  let result: { key: KeyObject; algorithm: number } | undefined;
  try {
    // A fresh array: tiny-cbor reads the whole underlying buffer, and Node's small Buffers share a pool.
    const cborBytes = new Uint8Array(Buffer.from(publicKeyBase64, 'base64'));
    const map = decodeCBOR(cborBytes) as unknown as Map<number, unknown>;
    const kty = map.get(1);
    const algorithm = map.get(3);
    const bytes = (label: number) => {
      const value = map.get(label);
      return value instanceof Uint8Array ? Buffer.from(value).toString('base64url') : undefined;
    };
    let jwk: JsonWebKey | undefined;
    if (kty === 1 && algorithm === -8 && map.get(-1) === 6) {
      jwk = { kty: 'OKP', crv: 'Ed25519', x: bytes(-2) };
    } else if (kty === 2 && algorithm === -7 && map.get(-1) === 1) {
      jwk = { kty: 'EC', crv: 'P-256', x: bytes(-2), y: bytes(-3) };
    } else if (kty === 3 && algorithm === -257) {
      jwk = { kty: 'RSA', n: bytes(-1), e: bytes(-2) };
    }
    if (jwk && typeof algorithm === 'number') {
      result = { key: createPublicKey({ key: jwk, format: 'jwk' }), algorithm };
    }
  } catch {
    result = undefined;
  }
  if (keys.size > 1024) keys.clear();
  keys.set(publicKeyBase64, result);
  return result;
}

function base64url(text: unknown): Buffer | undefined {
  if (typeof text !== 'string' || text.length > 16_384 || !/^[A-Za-z0-9_-]*$/.test(text)) {
    return undefined;
  }
  return Buffer.from(text, 'base64url');
}
