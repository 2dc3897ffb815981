import { createHash, randomBytes } from 'node:crypto';
import * as ed from '@noble/ed25519';
import { VeridexError } from '../errors/index.js';
import { sha256Hex } from './sha256.js';
import type { EvidenceSigner, EvidenceVerifier } from './signer.js';

// noble's synchronous API needs a SHA-512; node:crypto's is native and fast. Setting it
// once at import keeps `sign`/`verify` synchronous, which evidence sealing relies on.
ed.hashes.sha512 = (message: Uint8Array) =>
  new Uint8Array(createHash('sha512').update(message).digest());

/** An Ed25519 key pair as raw 32-byte keys (RFC 8032 secret seed and public key). */
export interface Ed25519KeyPair {
  privateKey: Uint8Array;
  publicKey: Uint8Array;
  /** `ed25519:` + the first 16 hex digits of SHA-256(publicKey). */
  keyId: string;
}

/** The stable key id of an Ed25519 public key: a fingerprint, so the same key always has the same id. */
export function ed25519KeyId(publicKey: Uint8Array): string {
  return `ed25519:${sha256Hex(publicKey).slice(0, 16)}`;
}

/**
 * Generates a fresh Ed25519 key pair from the operating system's CSPRNG.
 * @example const { privateKey, publicKey, keyId } = generateKeyPair();
 */
export function generateKeyPair(): Ed25519KeyPair {
  const privateKey = new Uint8Array(randomBytes(32));
  const publicKey = ed.getPublicKey(privateKey);
  return { privateKey, publicKey, keyId: ed25519KeyId(publicKey) };
}

function checkLength(key: Uint8Array, what: string): void {
  if (!(key instanceof Uint8Array) || key.length !== 32) {
    throw new VeridexError(
      'signer_key_invalid',
      `An Ed25519 ${what} must be 32 raw bytes; got ${key instanceof Uint8Array ? `${key.length} bytes` : typeof key}. Use generateKeyPair() or readPrivateKey()/readPublicKey() to load one.`,
    );
  }
}

/** Verifies Ed25519 signatures (RFC 8032, strict: non-canonical encodings are rejected). */
export class Ed25519Verifier implements EvidenceVerifier {
  readonly keyId: string;
  readonly algorithm = 'ed25519' as const;
  readonly publicKey: Uint8Array;

  /** @throws VeridexError `signer_key_invalid` unless `publicKey` is 32 bytes. */
  constructor(publicKey: Uint8Array) {
    checkLength(publicKey, 'public key');
    this.publicKey = publicKey;
    this.keyId = ed25519KeyId(publicKey);
  }

  verify(message: Uint8Array, signature: Uint8Array): boolean {
    if (signature.length !== 64) return false;
    try {
      return ed.verify(signature, message, this.publicKey, { zip215: false });
    } catch {
      return false;
    }
  }
}

/**
 * Signs with an Ed25519 private key via `@noble/ed25519`. Signatures are deterministic
 * (RFC 8032), so sealing the same evidence twice gives identical bundles.
 *
 * @example
 * const signer = new Ed25519Signer(generateKeyPair().privateKey);
 * const bundle = sealEvidence({ threadId, events }, [signer]);
 * verifyEvidence(bundle, { keys: [signer.verifier()] }).valid // true
 */
export class Ed25519Signer implements EvidenceSigner {
  readonly keyId: string;
  readonly algorithm = 'ed25519' as const;
  readonly publicKey: Uint8Array;
  readonly #privateKey: Uint8Array;

  /** @throws VeridexError `signer_key_invalid` unless `privateKey` is a 32-byte seed. */
  constructor(privateKey: Uint8Array) {
    checkLength(privateKey, 'private key');
    this.#privateKey = privateKey;
    this.publicKey = ed.getPublicKey(privateKey);
    this.keyId = ed25519KeyId(this.publicKey);
  }

  sign(message: Uint8Array): Uint8Array {
    return ed.sign(message, this.#privateKey);
  }

  /** The matching verifier, for {@link verifyEvidence}'s `keys`. */
  verifier(): Ed25519Verifier {
    return new Ed25519Verifier(this.publicKey);
  }
}
