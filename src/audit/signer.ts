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

/** The id prefix each algorithm's keys carry: key ids are namespaced by algorithm. */
export const KEY_ID_NAMESPACE: Readonly<Record<EvidenceSigner['algorithm'], string>> = {
  ed25519: 'ed25519:',
  'hmac-sha256': 'hmac:',
};

/**
 * True when a key's id lies in its algorithm's namespace (`ed25519:…` for Ed25519, `hmac:…`
 * for HMAC). Sealing refuses other signers and verification ignores other keys, so an id can
 * never make one algorithm's key check another's signatures.
 */
export function inKeyNamespace(key: Pick<EvidenceSigner, 'keyId' | 'algorithm'>): boolean {
  const prefix = KEY_ID_NAMESPACE[key.algorithm];
  return prefix !== undefined && key.keyId.startsWith(prefix) && key.keyId.length > prefix.length;
}
