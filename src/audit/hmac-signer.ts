import { timingSafeEqual } from 'node:crypto';
import { VeridexError } from '../errors/index.js';
import { hmacSha256 } from './sha256.js';
import type { EvidenceSigner, EvidenceVerifier } from './signer.js';

/** Every HMAC key id starts with this: ids are namespaced by algorithm. */
export const HMAC_KEY_PREFIX = 'hmac:';

/** Shortest accepted HMAC secret: 32 bytes, the output size of SHA-256 (RFC 2104 §3). */
export const MIN_HMAC_SECRET_BYTES = 32;

/**
 * HMAC-SHA256 signer and verifier for a shared secret: for deployments where the verifier
 * already holds the secret. Prefer Ed25519 when auditors outside your trust boundary verify.
 *
 * `options.keyId` names the key in bundles; it is always namespaced `hmac:…` (a given id without
 * the prefix gets it), so it cannot alias an Ed25519 key id.
 *
 * @throws VeridexError `signer_key_invalid` for a secret shorter than 32 bytes.
 * @example const signer = new HmacSigner(process.env.EVIDENCE_HMAC_SECRET!);
 */
export class HmacSigner implements EvidenceSigner, EvidenceVerifier {
  readonly keyId: string;
  readonly algorithm = 'hmac-sha256' as const;
  readonly #secret: Uint8Array;

  constructor(secret: Uint8Array | string, options: { keyId?: string } = {}) {
    const bytes = typeof secret === 'string' ? new TextEncoder().encode(secret) : secret;
    if (bytes.length < MIN_HMAC_SECRET_BYTES) {
      throw new VeridexError(
        'signer_key_invalid',
        `An HMAC secret must be at least ${MIN_HMAC_SECRET_BYTES} bytes; got ${bytes.length}. Generate one with: node -e "console.log(require('crypto').randomBytes(32).toString('hex'))"`,
      );
    }
    this.#secret = bytes;
    // A keyed fingerprint: identifies the secret without giving an offline guessing oracle.
    // Key ids are namespaced by algorithm: a chosen id is prefixed with `hmac:`, so it can
    // never equal an `ed25519:` id and make a verifier check an Ed25519 claim with this secret.
    this.keyId =
      options.keyId === undefined
        ? `hmac:${hmacSha256(bytes, 'veridex.keyid').toString('hex').slice(0, 16)}`
        : options.keyId.startsWith(HMAC_KEY_PREFIX)
          ? options.keyId
          : `${HMAC_KEY_PREFIX}${options.keyId}`;
  }

  sign(message: Uint8Array): Uint8Array {
    return new Uint8Array(hmacSha256(this.#secret, message));
  }

  verify(message: Uint8Array, signature: Uint8Array): boolean {
    const expected = hmacSha256(this.#secret, message);
    // Constant time, so a forger learns nothing from how long a wrong guess took.
    return signature.length === expected.length && timingSafeEqual(expected, signature);
  }
}
