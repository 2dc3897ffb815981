import { existsSync, linkSync, mkdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  canonicalJson,
  DEFAULT_KEY_DIR,
  Ed25519Signer,
  Ed25519Verifier,
  generateKeyPair,
  preAuthEncoding,
  privateKeyToPem,
  publicKeyToPem,
  readPrivateKey,
  readPublicKey,
} from '../audit/index.js';
import { VeridexError } from '../errors/index.js';
import type { Approver, ApproverKey } from './approver.js';

/** DSSE payload type of a directory entry seal: never a decision, a change or evidence. */
export const DIRECTORY_ENTRY_PAYLOAD_TYPE = 'application/vnd.veridex.directory-entry+json';

/** Where the directory key lives when none is configured (README "Approver directory"). */
export const DEFAULT_DIRECTORY_KEY_FILE = join(DEFAULT_KEY_DIR, 'directory-ed25519.key');

/** The environment variable naming the directory key file every process should share. */
export const DIRECTORY_KEY_ENV = 'VERIDEX_DIRECTORY_KEY';

/**
 * The directory key: what makes a row of `veridex_approvers` / `veridex_approver_keys` count.
 * Each approver and each key is sealed — signed over its canonical form — when `veridex
 * approvers`, the inbox or the library adds or revokes it; rows whose seal does not verify
 * (inserted or edited with `psql`) are ignored. The private half stays on disk with the
 * processes that change the directory; a process that only decides may hold the public half.
 */
export interface DirectoryKeyOption {
  /** The private key (raw seed, PEM/hex/base64 text or a file path), or a signer. */
  sealKey?: Uint8Array | string | Ed25519Signer;
  /** Verify only: the public key (raw, PEM/hex/base64 text or a file path). */
  trustKey?: Uint8Array | string;
}

/** What a seal covers for an approver: everything the directory says about them but keys. */
function approverStatement(approver: Approver): Record<string, unknown> {
  return {
    entry: 'approver',
    id: approver.id,
    displayName: approver.displayName,
    roles: approver.roles,
    addedAt: approver.addedAt,
    revokedAt: approver.revokedAt ?? null,
  };
}

/** What a seal covers for a key: its owner, its public material, its lifetime. */
function keyStatement(approverId: string, key: ApproverKey): Record<string, unknown> {
  return {
    entry: 'key',
    approver: approverId,
    type: key.type,
    keyId: key.keyId,
    publicKey: key.publicKey,
    credential:
      key.type === 'webauthn'
        ? {
            credentialId: key.credentialId,
            rpId: key.rpId,
            algorithm: key.algorithm,
            transports: key.transports ?? null,
            // Only when recorded, so the seals of passkeys enrolled before stay valid; sealed
            // when present, so origins cannot be added to, changed on or cut from a key by SQL.
            ...(key.origins !== undefined ? { origins: key.origins } : {}),
          }
        : null,
    addedAt: key.addedAt,
    revokedAt: key.revokedAt ?? null,
    sponsor: key.sponsor ?? null,
  };
}

function message(statement: Record<string, unknown>): Uint8Array {
  return preAuthEncoding(
    DIRECTORY_ENTRY_PAYLOAD_TYPE,
    new TextEncoder().encode(canonicalJson(statement)),
  );
}

/** Seals directory entries with the directory key, and checks seals read back. */
/** Records of the approvals service sealed by the directory key. */
export type SealedRecordKind = 'inbox_session' | 'invitation';

export class DirectorySeal {
  /** The directory key's id (`ed25519:…`), as `veridex approvers list` shows it. */
  readonly keyId: string;
  readonly #signer: Ed25519Signer | undefined;
  readonly #verifier: Ed25519Verifier;
  // Rows are read on every decision; a verified (statement, seal) pair stays verified.
  readonly #verified = new Set<string>();

  constructor(key: { signer: Ed25519Signer } | { publicKey: Uint8Array }) {
    this.#signer = 'signer' in key ? key.signer : undefined;
    this.#verifier = 'signer' in key ? key.signer.verifier() : new Ed25519Verifier(key.publicKey);
    this.keyId = this.#verifier.keyId;
  }

  /** Whether this seal can sign (holds the private key), not only verify. */
  get canSeal(): boolean {
    return this.#signer !== undefined;
  }

  /** The seal of an approver entry (base64 signature). @throws `directory_read_only`. */
  sealApprover(approver: Approver): string {
    return this.#sign(approverStatement(approver));
  }

  /** The seal of one key of `approverId`. @throws `directory_read_only`. */
  sealKey(approverId: string, key: ApproverKey): string {
    return this.#sign(keyStatement(approverId, key));
  }

  /** Whether `seal` is this directory key's signature over the approver entry as read. */
  checkApprover(approver: Approver, seal: string | null): boolean {
    return this.#check(approverStatement(approver), seal);
  }

  /** Whether `seal` is this directory key's signature over the key entry as read. */
  checkKey(approverId: string, key: ApproverKey, seal: string | null): boolean {
    return this.#check(keyStatement(approverId, key), seal);
  }

  /**
   * The seal of a record the approvals service keeps beside the directory (an inbox session,
   * an invitation): what an insider could insert to act as an admin or enrol a key.
   * @throws `directory_read_only`.
   */
  sealRecord(kind: SealedRecordKind, fields: Record<string, string>): string {
    return this.#sign({ entry: kind, ...fields });
  }

  /** Whether `seal` is this directory key's signature over the record as read. */
  checkRecord(
    kind: SealedRecordKind,
    fields: Record<string, string>,
    seal: string | null,
  ): boolean {
    return this.#check({ entry: kind, ...fields }, seal);
  }

  #sign(statement: Record<string, unknown>): string {
    if (!this.#signer) {
      throw new VeridexError(
        'directory_read_only',
        `This process holds only the public directory key ${this.keyId}, so it cannot add or revoke approvers or keys. Run \`veridex approvers\` where the private key is, or pass { sealKey }.`,
      );
    }
    return Buffer.from(this.#signer.sign(message(statement))).toString('base64');
  }

  #check(statement: Record<string, unknown>, seal: string | null): boolean {
    if (typeof seal !== 'string' || !/^[A-Za-z0-9+/]{86}==$/.test(seal)) return false;
    const memo = `${seal}\n${canonicalJson(statement)}`;
    if (this.#verified.has(memo)) return true;
    const ok = this.#verifier.verify(message(statement), Buffer.from(seal, 'base64'));
    if (ok) {
      if (this.#verified.size >= 10_000) this.#verified.clear();
      this.#verified.add(memo);
    }
    return ok;
  }
}

/**
 * The directory seal `option` names: its `sealKey` or `trustKey`, else the key file in
 * `$VERIDEX_DIRECTORY_KEY`, else `./.veridex/keys/directory-ed25519.key` — generated there on
 * first use (mode 0600, beside its `.pub`), so one machine's CLI, inbox and app agree.
 * @throws VeridexError `signer_key_invalid` for a key that does not load (or a key file
 *   others may read), `config_invalid` when both keys are given.
 */
export function loadDirectorySeal(option: DirectoryKeyOption = {}): DirectorySeal {
  if (option.sealKey !== undefined && option.trustKey !== undefined) {
    throw new VeridexError(
      'config_invalid',
      'Give the directory either sealKey (to change and read it) or trustKey (to read it), not both.',
    );
  }
  if (option.sealKey instanceof Ed25519Signer) return new DirectorySeal({ signer: option.sealKey });
  if (option.sealKey !== undefined) {
    const raw =
      typeof option.sealKey === 'string' ? readPrivateKey(option.sealKey) : option.sealKey;
    return new DirectorySeal({ signer: new Ed25519Signer(raw) });
  }
  if (option.trustKey !== undefined) {
    const raw =
      typeof option.trustKey === 'string' ? readPublicKey(option.trustKey) : option.trustKey;
    return new DirectorySeal({ publicKey: raw });
  }
  const path = process.env[DIRECTORY_KEY_ENV] || DEFAULT_DIRECTORY_KEY_FILE;
  if (!existsSync(path)) createKeyFile(path);
  return new DirectorySeal({ signer: new Ed25519Signer(readPrivateKey(path)) });
}

/**
 * Writes a fresh directory key to `path` unless one appears there first: written to a private
 * temporary file and linked into place, so two processes starting at once end up with one key
 * and no reader ever sees a half-written file.
 */
function createKeyFile(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const pair = generateKeyPair();
  const temporary = `${path}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(temporary, privateKeyToPem(pair.privateKey), { mode: 0o600, flag: 'wx' });
  try {
    linkSync(temporary, path);
    // The public half, for processes that only verify ({ trustKey }).
    writeFileSync(path.replace(/(\.key)?$/, '.pub'), publicKeyToPem(pair.publicKey), {
      mode: 0o644,
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(temporary);
  }
}

/**
 * A stored time as ISO text, never throwing: a value no seal could cover (`infinity`, a
 * malformed string) becomes text that fails its seal, so the row (a directory entry, an inbox session
 * or invitation) is ignored, not fatal.
 */
export function storedTime(value: Date | string | null | undefined): string {
  const time = value instanceof Date ? value.getTime() : Date.parse(String(value));
  return Number.isFinite(time)
    ? new Date(time).toISOString()
    : `invalid:${String(value).slice(0, 40)}`;
}
