import {
  assertTrustedIfFile,
  Ed25519Verifier,
  type EvidenceVerifier,
  HmacSigner,
  readPublicKey,
} from '../audit/index.js';
import { VeridexError } from '../errors/index.js';
import { UsageError } from './io.js';

/**
 * The verifiers named by `--key` (Ed25519 public keys: PEM files, hex or base64) and
 * `--hmac-secret-env` (environment variables holding HMAC secrets).
 * @throws UsageError for an unreadable key, an unset variable, or no key at all.
 */
export function verifierKeys(values: {
  key?: string[] | undefined;
  'hmac-secret-env'?: string[] | undefined;
}): EvidenceVerifier[] {
  const keys: EvidenceVerifier[] = [];
  try {
    for (const key of values.key ?? []) {
      assertTrustedIfFile(key);
      keys.push(new Ed25519Verifier(readPublicKey(key)));
    }
    for (const name of values['hmac-secret-env'] ?? []) {
      const secret = process.env[name];
      if (!secret) throw new UsageError(`environment variable ${name} is not set`);
      keys.push(new HmacSigner(secret));
    }
  } catch (error) {
    if (VeridexError.is(error)) throw new UsageError(error.message);
    throw error;
  }
  if (keys.length === 0) throw new UsageError('give at least one --key (or --hmac-secret-env)');
  return keys;
}
