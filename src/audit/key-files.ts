import { createPrivateKey, createPublicKey } from 'node:crypto';
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { VeridexError } from '../errors/index.js';
import {
  type Ed25519KeyPair,
  Ed25519Signer,
  ed25519KeyId,
  generateKeyPair,
} from './ed25519-signer.js';

/** Where the default signing key lives when none is configured. */
export const DEFAULT_KEY_DIR = './.veridex/keys';
/** File names inside a key directory. */
export const PRIVATE_KEY_FILE = 'evidence-ed25519.key';
export const PUBLIC_KEY_FILE = 'evidence-ed25519.pub';

// DER prefixes of an Ed25519 PKCS#8 private key and SPKI public key (RFC 8410): the raw
// 32-byte key follows each. Writing them by hand keeps the files readable by OpenSSL.
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

function pem(label: string, der: Buffer): string {
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

/** PKCS#8 PEM text of a raw Ed25519 private key. */
export function privateKeyToPem(privateKey: Uint8Array): string {
  return pem('PRIVATE KEY', Buffer.concat([PKCS8_PREFIX, privateKey]));
}

/** SPKI PEM text of a raw Ed25519 public key (`openssl pkey -pubin -in file -text` reads it). */
export function publicKeyToPem(publicKey: Uint8Array): string {
  return pem('PUBLIC KEY', Buffer.concat([SPKI_PREFIX, publicKey]));
}

function invalidKey(what: string, why: string): VeridexError {
  return new VeridexError(
    'signer_key_invalid',
    `Could not read the ${what}: ${why}. Expected a PEM file, 64 hex digits or 44 base64 characters (create one with \`veridex keys generate\`).`,
  );
}

/**
 * Reads an Ed25519 public key from PEM text, 64 hex digits, base64, or a path to a file
 * holding any of those. Returns the raw 32 bytes.
 * @throws VeridexError `signer_key_invalid` if it is none of those.
 */
export function readPublicKey(textOrPath: string): Uint8Array {
  const text = loadText(textOrPath).trim();
  if (text.includes('-----BEGIN')) {
    try {
      const jwk = createPublicKey(text).export({ format: 'jwk' });
      if (jwk.crv !== 'Ed25519' || !jwk.x)
        throw new Error(`not an Ed25519 key (${jwk.crv ?? jwk.kty})`);
      return new Uint8Array(Buffer.from(jwk.x, 'base64url'));
    } catch (error) {
      throw invalidKey('public key', (error as Error).message);
    }
  }
  return rawKey(text, 'public key');
}

/**
 * Reads an Ed25519 private key (PKCS#8 PEM, hex or base64 seed; text or file path).
 * @throws VeridexError `signer_key_invalid` if it is none of those.
 */
export function readPrivateKey(textOrPath: string): Uint8Array {
  const text = loadText(textOrPath, true).trim();
  if (text.includes('-----BEGIN')) {
    try {
      const jwk = createPrivateKey(text).export({ format: 'jwk' });
      if (jwk.crv !== 'Ed25519' || !jwk.d)
        throw new Error(`not an Ed25519 key (${jwk.crv ?? jwk.kty})`);
      return new Uint8Array(Buffer.from(jwk.d, 'base64url'));
    } catch (error) {
      throw invalidKey('private key', (error as Error).message);
    }
  }
  return rawKey(text, 'private key');
}

function loadText(textOrPath: string, isPrivate = false): string {
  const looksLikeKey =
    textOrPath.includes('-----BEGIN') ||
    /^[0-9a-fA-F]{64}$|^[A-Za-z0-9+/]{43}=$/.test(textOrPath.trim());
  if (looksLikeKey) return textOrPath;
  try {
    if (isPrivate) checkPrivateFile(textOrPath);
    return readFileSync(textOrPath, 'utf8');
  } catch (error) {
    if (VeridexError.is(error)) throw error;
    throw invalidKey(
      'key',
      `no such key text or readable file "${textOrPath}" (${(error as NodeJS.ErrnoException).code})`,
    );
  }
}

/**
 * Like ssh: a private key file someone else owns, or that others may read or write, is
 * refused — another local user could have planted it or could copy it.
 */
function checkPrivateFile(path: string): void {
  if (process.platform === 'win32') return;
  const stats = lstatSync(path);
  const uid = process.getuid?.();
  if (stats.isSymbolicLink() || !stats.isFile()) {
    throw invalidKey('private key', `${path} is not a regular file`);
  }
  if ((uid !== undefined && stats.uid !== uid) || (stats.mode & 0o077) !== 0) {
    throw invalidKey(
      'private key',
      `${path} must be owned by you and readable by no one else (chmod 600 ${path})`,
    );
  }
}

function rawKey(text: string, what: string): Uint8Array {
  if (/^[0-9a-fA-F]{64}$/.test(text)) return new Uint8Array(Buffer.from(text, 'hex'));
  if (/^[A-Za-z0-9+/]{43}=$/.test(text)) return new Uint8Array(Buffer.from(text, 'base64'));
  throw invalidKey(what, 'unrecognised format');
}

/** Paths written by {@link writeKeyPair}. */
export interface KeyPairFiles {
  privateKeyPath: string;
  publicKeyPath: string;
  keyId: string;
}

/**
 * Writes a key pair as PEM files into `dir` (created if missing): the private key with file
 * mode 0600, the public key world-readable. Refuses to overwrite an existing private key.
 * `name` picks the file names (`<name>.key`, `<name>.pub`; default the evidence key's).
 */
export function writeKeyPair(
  dir: string,
  pair: Ed25519KeyPair = generateKeyPair(),
  name?: string,
): KeyPairFiles {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const privateKeyPath = join(dir, name ? `${name}.key` : PRIVATE_KEY_FILE);
  const publicKeyPath = join(dir, name ? `${name}.pub` : PUBLIC_KEY_FILE);
  if (existsSync(privateKeyPath)) {
    throw new VeridexError(
      'config_invalid',
      `${privateKeyPath} already exists; refusing to overwrite a signing key. Choose another --out directory.`,
    );
  }
  writeFileSync(privateKeyPath, privateKeyToPem(pair.privateKey), { mode: 0o600, flag: 'wx' });
  // mode is masked by the umask on creation; set it explicitly.
  chmodSync(privateKeyPath, 0o600);
  writeFileSync(publicKeyPath, publicKeyToPem(pair.publicKey), { mode: 0o644 });
  return { privateKeyPath, publicKeyPath, keyId: ed25519KeyId(pair.publicKey) };
}

/**
 * The default evidence signer: the Ed25519 key in `dir`, generated on first use.
 * `created` tells the caller to print the public key path so the user can verify offline.
 */
export function loadOrCreateSigner(dir: string = DEFAULT_KEY_DIR): {
  signer: Ed25519Signer;
  created: boolean;
  publicKeyPath: string;
} {
  const privateKeyPath = join(dir, PRIVATE_KEY_FILE);
  const publicKeyPath = join(dir, PUBLIC_KEY_FILE);
  if (existsSync(privateKeyPath)) {
    return {
      signer: new Ed25519Signer(readPrivateKey(privateKeyPath)),
      created: false,
      publicKeyPath,
    };
  }
  const pair = generateKeyPair();
  writeKeyPair(dir, pair);
  return { signer: new Ed25519Signer(pair.privateKey), created: true, publicKeyPath };
}
