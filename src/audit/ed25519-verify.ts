import { createPublicKey, type KeyObject, verify } from 'node:crypto';
import { decodeBase64Strict } from './dsse.js';

// DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410); the raw 32-byte key follows.
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const cache = new Map<string, KeyObject>();
const CACHE_LIMIT = 1024;

/**
 * Verifies an Ed25519 signature (RFC 8032) with node:crypto — about ten times faster than the
 * pure-JS verifier, and it accepts exactly the signatures `@noble/ed25519` makes (tested).
 * Keys and signatures arrive as strict base64; anything malformed is simply not valid.
 */
export function verifyEd25519(
  publicKeyBase64: string,
  message: Uint8Array,
  signatureBase64: string,
): boolean {
  const signature = decodeBase64Strict(signatureBase64);
  if (signature?.length !== 64) return false;
  const key = keyObject(publicKeyBase64);
  if (!key) return false;
  try {
    return verify(null, message, key, signature);
  } catch {
    return false;
  }
}

function keyObject(publicKeyBase64: string): KeyObject | undefined {
  const cached = cache.get(publicKeyBase64);
  if (cached) return cached;
  const raw = decodeBase64Strict(publicKeyBase64);
  if (raw?.length !== 32) return undefined;
  let key: KeyObject;
  try {
    key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
  } catch {
    return undefined;
  }
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(publicKeyBase64, key);
  return key;
}
