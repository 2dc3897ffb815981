import { decodeBase64Strict } from './dsse.js';
import { type EvidenceVerifier, inKeyNamespace } from './signer.js';

/** How one signature fared. */
export interface SignatureCheck {
  keyid: string;
  status: 'valid' | 'invalid' | 'unknown_key';
}

/**
 * Checks DSSE-style signature entries (`{ keyid, sig }`, strict base64) over `message` with the
 * trusted `keys` (each only under an id in its algorithm's namespace). Problems: a malformed entry, a signature by a trusted key that does not verify
 * (`changed` says what that implies), and no valid signature by a trusted key at all.
 */
export function checkSignatures(
  message: Uint8Array,
  entries: readonly unknown[],
  keys: readonly EvidenceVerifier[],
  changed: string,
): { signatures: SignatureCheck[]; problems: string[] } {
  const signatures: SignatureCheck[] = [];
  const problems: string[] = [];
  for (const entry of entries) {
    const { keyid, sig } = (entry ?? {}) as { keyid?: unknown; sig?: unknown };
    if (typeof keyid !== 'string' || typeof sig !== 'string') {
      problems.push('a signature entry is malformed');
      continue;
    }
    // A key counts only under an id of its own algorithm's namespace (`ed25519:`, `hmac:`),
    // and only when no other trusted key claims the same id: a custom verifier or an HMAC
    // key named like an Ed25519 key must never check the Ed25519 key's signatures.
    const verifiers = keys.filter((key) => key.keyId === keyid && inKeyNamespace(key));
    if (verifiers.length > 1) {
      signatures.push({ keyid, status: 'invalid' });
      problems.push(`key id ${keyid} names more than one trusted key; it proves nothing`);
      continue;
    }
    const verifier = verifiers[0];
    if (!verifier) {
      signatures.push({ keyid, status: 'unknown_key' });
      continue;
    }
    const signature = decodeBase64Strict(sig);
    const ok = signature !== undefined && verifier.verify(message, signature);
    signatures.push({ keyid, status: ok ? 'valid' : 'invalid' });
    if (!ok) problems.push(`signature by ${keyid} does not verify (${changed})`);
  }
  if (!signatures.some((check) => check.status === 'valid')) {
    const unknown = signatures
      .filter((check) => check.status === 'unknown_key')
      .map((check) => check.keyid);
    problems.push(
      unknown.length > 0
        ? `no signature by a trusted key (signed by unknown key ${unknown.join(', ')})`
        : 'no valid signature by a trusted key',
    );
  }
  return { signatures, problems };
}
