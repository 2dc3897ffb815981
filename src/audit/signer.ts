/** Signs evidence bundles (DSSE pre-authentication encodings). */
export interface EvidenceSigner {
  /** Stable id of the key, written next to each signature: `ed25519:<fingerprint>` or `hmac:<fingerprint>`. */
  readonly keyId: string;
  readonly algorithm: 'ed25519' | 'hmac-sha256';
  sign(message: Uint8Array): Uint8Array;
}

/** Checks signatures made by one key. */
export interface EvidenceVerifier {
  readonly keyId: string;
  readonly algorithm: 'ed25519' | 'hmac-sha256';
  /** Never throws: malformed signatures are simply not valid. */
  verify(message: Uint8Array, signature: Uint8Array): boolean;
}
