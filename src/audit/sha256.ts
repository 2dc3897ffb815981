import { createHmac, hash } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';

/** SHA-256 of `data` (UTF-8 for strings) as lower-case hex. */
export function sha256Hex(data: string | Uint8Array): string {
  // crypto.hash is the one-shot API (Node ≥ 20.12): about twice as fast as createHash for small inputs.
  return hash('sha256', data, 'hex');
}

/** SHA-256 hex of the RFC 8785 canonical JSON of `value`: the library's content hash. */
export function contentHash(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}

/** HMAC-SHA256 of `data` under `key`, as raw bytes. */
export function hmacSha256(key: Uint8Array | string, data: string | Uint8Array): Buffer {
  return createHmac('sha256', key).update(data).digest();
}
