import type { Approver, ApproverInit, ApproverKey, PasskeyInit } from './approver.js';
import {
  type ApproverDirectory,
  ambiguous,
  buildApprover,
  buildKey,
  sponsoredKeys,
  unknownApprover,
} from './approver-directory.js';
import { identityKey } from './canonical-identity.js';

/**
 * An {@link ApproverDirectory} in process memory, e.g. from `ApprovalManager({ approvers: [...] })`.
 *
 * @example
 * const directory = new MemoryApproverDirectory([{ id: 'alice@corp', publicKeys: [alicePublicKey] }]);
 */
export class MemoryApproverDirectory implements ApproverDirectory {
  readonly #byKey = new Map<string, Approver>();
  readonly #owners = new Map<string, string>();
  readonly #now: () => Date;

  /** @throws VeridexError `identity_ambiguous` / `identity_invalid` for a bad initial list. */
  constructor(approvers: readonly ApproverInit[] = [], options: { now?: () => Date } = {}) {
    this.#now = options.now ?? (() => new Date());
    for (const init of approvers) this.#insert(buildApprover(init, this.#now()));
  }

  async get(id: string): Promise<Approver | undefined> {
    const approver = this.#lookup(id);
    return approver && structuredClone(approver);
  }

  async findByKey(keyId: string): Promise<{ approver: Approver; key: ApproverKey } | undefined> {
    const owner = this.#owners.get(keyId);
    const approver = owner === undefined ? undefined : this.#byKey.get(owner);
    const key = approver?.keys.find((candidate) => candidate.keyId === keyId);
    return approver && key ? structuredClone({ approver, key }) : undefined;
  }

  async list(): Promise<Approver[]> {
    return [...this.#byKey.values()]
      .sort((a, b) => (a.id < b.id ? -1 : 1))
      .map((approver) => structuredClone(approver));
  }

  async add(init: ApproverInit): Promise<Approver> {
    return structuredClone(this.#insert(buildApprover(init, this.#now())));
  }

  async addKey(
    id: string,
    publicKey: Uint8Array | string | PasskeyInit,
    options: { sponsor?: string } = {},
  ): Promise<Approver> {
    const approver = this.#lookup(id);
    if (!approver) throw unknownApprover(id);
    const key = buildKey(publicKey, this.#now().toISOString(), options.sponsor);
    this.#claimKey(key.keyId, approver.id);
    approver.keys.push(key);
    return structuredClone(approver);
  }

  async revoke(id: string, options: { keyId?: string } = {}): Promise<Approver> {
    const approver = this.#lookup(id);
    if (!approver) throw unknownApprover(id);
    const at = this.#now().toISOString();
    if (options.keyId === undefined) {
      // As the database directory does: revoking an approver revokes each of its keys.
      approver.revokedAt ??= at;
      for (const key of approver.keys) key.revokedAt ??= approver.revokedAt;
      for (const { key } of sponsoredKeys([...this.#byKey.values()], approver.id)) {
        key.revokedAt ??= approver.revokedAt;
      }
    } else {
      const key = approver.keys.find((candidate) => candidate.keyId === options.keyId);
      if (!key) throw unknownApprover(`${id} with key ${options.keyId}`);
      key.revokedAt ??= at;
    }
    return structuredClone(approver);
  }

  #lookup(id: string): Approver | undefined {
    try {
      return this.#byKey.get(identityKey(id));
    } catch {
      return undefined;
    }
  }

  #insert(approver: Approver): Approver {
    const key = identityKey(approver.id);
    const existing = this.#byKey.get(key);
    if (existing) {
      throw ambiguous(
        existing.id === approver.id
          ? `approver "${approver.id}" already exists`
          : `"${approver.id}" looks like the existing approver "${existing.id}"`,
      );
    }
    for (const entry of approver.keys) this.#claimKey(entry.keyId, approver.id, false);
    for (const entry of approver.keys) this.#owners.set(entry.keyId, key);
    this.#byKey.set(key, approver);
    return approver;
  }

  #claimKey(keyId: string, approverId: string, record = true): void {
    const owner = this.#owners.get(keyId);
    if (owner !== undefined) {
      throw ambiguous(`key ${keyId} already belongs to "${this.#byKey.get(owner)?.id}"`);
    }
    if (record) this.#owners.set(keyId, identityKey(approverId));
  }
}
