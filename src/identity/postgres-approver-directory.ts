import type { Database, Queryable } from '../db/index.js';
import { VeridexError } from '../errors/index.js';
import type { Approver, ApproverInit, ApproverKey, PasskeyInit } from './approver.js';
import {
  type ApproverDirectory,
  ambiguous,
  buildApprover,
  buildKey,
  sponsoredKeys,
  unknownApprover,
} from './approver-directory.js';
import { canonicalIdentity, identityKey, tryIdentityKey } from './canonical-identity.js';
import {
  type DirectoryKeyOption,
  type DirectorySeal,
  loadDirectorySeal,
  storedTime,
} from './directory-seal.js';
import {
  INSERT_APPROVER,
  INSERT_KEY,
  REVOKE_APPROVER,
  REVOKE_KEY,
  SEAL_APPROVER,
  SEAL_KEY,
  SELECT_ALL,
  SELECT_APPROVER_ENTRIES,
  SELECT_BY_IDENTITY_KEY,
  SELECT_BY_KEY_ID,
  SELECT_ID_BY_IDENTITY_KEY,
  SELECT_KEY_OWNER,
} from './sql.js';

interface ApproverRow {
  id: string;
  identity_key: string;
  display_name: string;
  roles: string[];
  added_at: Date | string;
  revoked_at: Date | string | null;
  seal: string | null;
  keys: Array<{
    type: ApproverKey['type'];
    keyId: string;
    publicKey: string;
    addedAt: string;
    revokedAt: string | null;
    credential: Record<string, unknown> | null;
    seal: string | null;
    sponsor: string | null;
  }>;
}

/** A row of the directory tables whose seal does not verify: it is ignored. */
export interface UnsealedEntry {
  approver: string;
  /** Set when the row is one key of the approver; otherwise the approver row itself. */
  keyId?: string;
  /**
   * Why: `unsealed` (the default: no seal by the directory key), or `predates_approver` — a
   * sealed key added before the approver entry it sits under was, i.e. a key of an earlier
   * approver of that id (revoked and removed), carried to the namesake added since.
   */
  reason?: 'unsealed' | 'predates_approver';
}

/** Options of {@link PostgresApproverDirectory}. */
export interface PostgresApproverDirectoryOptions extends DirectoryKeyOption {
  now?: () => Date;
  /**
   * Called for every row read whose seal does not verify — someone wrote the tables without
   * the directory key. The row is ignored either way; `ApprovalManager` records a
   * `security_event` (`directory_entry_unsealed`).
   */
  onUnsealed?: (entry: UnsealedEntry) => void;
}

/** A row as stored, believed by no one: {@link PostgresApproverDirectory} checks its seals. */
function rowEntries(row: ApproverRow): {
  approver: Approver;
  seal: string | null;
  keySeals: Array<string | null>;
} {
  const approver: Approver = {
    id: row.id,
    displayName: row.display_name,
    roles: row.roles,
    keys: row.keys.map(
      ({ revokedAt, credential, seal: _seal, sponsor, ...key }) =>
        ({
          ...key,
          ...(typeof sponsor === 'string' ? { sponsor } : {}),
          // A passkey's credential id, relying party, algorithm, transports and origins.
          ...(typeof credential === 'object' && credential !== null ? credential : {}),
          addedAt: storedTime(key.addedAt),
          ...(revokedAt ? { revokedAt: storedTime(revokedAt) } : {}),
        }) as ApproverKey,
    ),
    addedAt: storedTime(row.added_at),
    ...(row.revoked_at ? { revokedAt: storedTime(row.revoked_at) } : {}),
  };
  return { approver, seal: row.seal, keySeals: row.keys.map((key) => key.seal) };
}

/**
 * An {@link ApproverDirectory} in the database (`veridex_approvers`, `veridex_approver_keys`;
 * run `migrate()` first), shared by every process — the app, `veridex approvals`, the inbox.
 * Uniqueness of identities (by confusable skeleton) and keys is enforced by the database.
 *
 * The tables are not the authority: every approver and key is sealed with the directory key
 * (see {@link loadDirectorySeal}) when it is added or revoked, and a row whose seal does not
 * verify — an insider's `INSERT` of a key, an `UPDATE` of someone's roles, a revocation undone —
 * is ignored by every lookup, so no decision signed with it counts.
 *
 * @example
 * const directory = new PostgresApproverDirectory(db, { sealKey: '/etc/veridex/directory.key' });
 */
export class PostgresApproverDirectory implements ApproverDirectory {
  readonly #db: Database;
  readonly #now: () => Date;
  readonly #options: PostgresApproverDirectoryOptions;
  #loaded: DirectorySeal | undefined;

  /** The key is loaded on first use: @throws then `signer_key_invalid` if it does not load. */
  constructor(db: Database, options: PostgresApproverDirectoryOptions = {}) {
    this.#db = db;
    this.#now = options.now ?? (() => new Date());
    this.#options = options;
  }

  /** The directory seal this process checks rows with (and seals changes with). */
  get seal(): DirectorySeal {
    this.#loaded ??= loadDirectorySeal(this.#options);
    return this.#loaded;
  }

  async get(id: string): Promise<Approver | undefined> {
    // The sealed one when several rows answer to the name (an insider's look-alike row must not
    // hide the real approver, e.g. from the operator revoking a stolen key).
    for (const row of await this.#rowsNamed(id)) {
      const approver = this.#verified(row);
      if (approver) return approver;
    }
    return undefined;
  }

  /**
   * The stored rows for the approver named `id`, the exact id first: those whose own (sealed) id
   * has `id`'s identity key — never a row an insider pointed the unsealed `identity_key` at.
   */
  async #rowsNamed(id: string): Promise<ApproverRow[]> {
    const key = tryIdentityKey(id);
    if (key === undefined) return [];
    const exact = canonicalIdentity(id);
    const { rows } = await this.#db.query<ApproverRow>(SELECT_BY_IDENTITY_KEY, [key, exact]);
    return rows
      .filter((row) => tryIdentityKey(row.id) === key)
      .sort((a, b) => Number(b.id === exact) - Number(a.id === exact));
  }

  async findByKey(keyId: string): Promise<{ approver: Approver; key: ApproverKey } | undefined> {
    const { rows } = await this.#db.query<ApproverRow>(SELECT_BY_KEY_ID, [keyId]);
    const approver = rows[0] && this.#verified(rows[0]);
    const key = approver?.keys.find((candidate) => candidate.keyId === keyId);
    return approver && key ? { approver, key } : undefined;
  }

  async list(): Promise<Approver[]> {
    const { rows } = await this.#db.query<ApproverRow>(SELECT_ALL);
    return rows.flatMap((row) => this.#verified(row) ?? []);
  }

  /** Every row whose seal does not verify (what `veridex approvers list` warns about). */
  async unsealed(): Promise<UnsealedEntry[]> {
    const { rows } = await this.#db.query<ApproverRow>(SELECT_ALL);
    return rows.flatMap((row) => this.#problems(row));
  }

  async add(init: ApproverInit): Promise<Approver> {
    const approver = buildApprover(init, this.#now());
    const key = identityKey(approver.id);
    const seal = this.seal.sealApprover(approver);
    await this.#db.transaction(async (tx) => {
      await this.#refuseSealedLookAlike(tx, approver.id, key);
      const inserted = await tx.query(INSERT_APPROVER, [
        approver.id,
        key,
        approver.displayName,
        JSON.stringify(approver.roles),
        approver.addedAt,
        seal,
      ]);
      if (inserted.rowCount === 0) {
        const { rows } = await tx.query<{ id: string }>(SELECT_ID_BY_IDENTITY_KEY, [
          key,
          approver.id,
        ]);
        const existing = rows[0]?.id ?? approver.id;
        throw ambiguous(
          existing === approver.id
            ? `approver "${approver.id}" already exists`
            : `"${approver.id}" looks like the existing approver "${existing}"`,
        );
      }
      for (const entry of approver.keys) {
        await insertKey(tx, approver.id, entry, this.seal.sealKey(approver.id, entry));
      }
    });
    return approver;
  }

  /**
   * Refuses `id` when a sealed approver already answers to its identity key. The database's
   * unique index on `identity_key` stops honest look-alikes, but that column is not sealed: an
   * insider who moves alice's value away would let "аlice" (Cyrillic а) be inserted and sealed.
   * So every approver entry is read, and each whose SEALED id has this identity key — revoked
   * ones included, as the index would hold them — refuses the name. Unsealed rows count for
   * nothing here either.
   */
  async #refuseSealedLookAlike(db: Queryable, id: string, key: string): Promise<void> {
    const { rows } = await db.query<ApproverRow>(SELECT_APPROVER_ENTRIES);
    for (const row of rows) {
      if (tryIdentityKey(row.id) !== key) continue;
      const { approver, seal } = rowEntries(row);
      if (!this.seal.checkApprover(approver, seal)) continue;
      throw ambiguous(
        row.id === id
          ? `approver "${id}" already exists`
          : `"${id}" looks like the existing approver "${row.id}"${row.identity_key === key ? '' : ' (whose identity_key column was edited)'}`,
      );
    }
  }

  async addKey(
    id: string,
    publicKey: Uint8Array | string | PasskeyInit,
    options: { sponsor?: string } = {},
  ): Promise<Approver> {
    const approver = await this.get(id);
    if (!approver) throw unknownApprover(id);
    // Never dated before its approver entry (a process whose clock is behind): such a key would
    // read as one carried from an earlier approver of this id, and be ignored.
    const now = this.#now().toISOString();
    const addedAt = Date.parse(now) < Date.parse(approver.addedAt) ? approver.addedAt : now;
    const key = buildKey(publicKey, addedAt, options.sponsor);
    await insertKey(this.#db, approver.id, key, this.seal.sealKey(approver.id, key));
    return { ...approver, keys: [...approver.keys, key] };
  }

  /**
   * Revokes a sealed approver or key (an unsealed one already counts for nothing). Revoking an
   * approver also seals each of its keys revoked at the same time — so a key row saved from then
   * on reads revoked wherever an insider puts it back — and, for an approver revoked before
   * that, seals its keys still active revoked at the approver's revocation time.
   */
  async revoke(id: string, options: { keyId?: string } = {}): Promise<Approver> {
    const approver = await this.get(id);
    if (!approver) throw unknownApprover(id);
    const revokedAt = this.#now().toISOString();
    if (options.keyId === undefined) {
      const at = approver.revokedAt ?? revokedAt;
      const sponsored = sponsoredKeys(await this.list(), approver.id);
      await this.#db.transaction(async (tx) => {
        for (const { approver: holder, key } of sponsored) {
          const seal = this.seal.sealKey(holder.id, { ...key, revokedAt: at });
          await tx.query(REVOKE_KEY, [holder.id, key.keyId, at, seal]);
        }
        if (approver.revokedAt === undefined) {
          const seal = this.seal.sealApprover({ ...approver, revokedAt: at });
          await tx.query(REVOKE_APPROVER, [approver.id, at, seal]);
        }
        for (const key of approver.keys) {
          if (key.revokedAt !== undefined) continue;
          const seal = this.seal.sealKey(approver.id, { ...key, revokedAt: at });
          await tx.query(REVOKE_KEY, [approver.id, key.keyId, at, seal]);
        }
      });
    } else {
      const key = approver.keys.find((candidate) => candidate.keyId === options.keyId);
      if (!key) throw unknownApprover(`${id} with key ${options.keyId}`);
      if (key.revokedAt === undefined) {
        const seal = this.seal.sealKey(approver.id, { ...key, revokedAt });
        await this.#db.query(REVOKE_KEY, [approver.id, key.keyId, revokedAt, seal]);
      }
    }
    return (await this.get(approver.id)) ?? approver;
  }

  /**
   * Seals an approver's rows as they stand in the database — the operator vouches for them
   * (rows from before directory seals, or restored from a backup). Only `keyId` when given.
   * @returns the approver as now sealed. @throws `approver_unknown`, `directory_read_only`.
   */
  async vouch(id: string, options: { keyId?: string } = {}): Promise<Approver> {
    const [row] = await this.#rowsNamed(id);
    if (!row) throw unknownApprover(id);
    if (row.identity_key !== identityKey(row.id)) {
      throw new VeridexError(
        'identity_ambiguous',
        `The row of "${row.id.slice(0, 80)}" is indexed under another identity (its identity_key column was edited): restore it before vouching for it.`,
      );
    }
    const { approver } = rowEntries(row);
    const keys = approver.keys.filter(
      (entry) => options.keyId === undefined || entry.keyId === options.keyId,
    );
    if (options.keyId !== undefined && keys.length === 0) {
      throw unknownApprover(`${id} with key ${options.keyId}`);
    }
    const carried = keys.find((entry) => predates(entry, approver));
    if (carried) {
      throw new VeridexError(
        'identity_ambiguous',
        `Key ${carried.keyId} of "${approver.id.slice(0, 80)}" was added (${carried.addedAt}) before this approver entry was (${approver.addedAt}): it belongs to an earlier approver of that id. Remove the row, and add the key again (veridex approvers add-key) if it is theirs now.`,
      );
    }
    await this.#db.transaction(async (tx) => {
      if (options.keyId === undefined) {
        await tx.query(SEAL_APPROVER, [approver.id, this.seal.sealApprover(approver)]);
      }
      for (const entry of keys) {
        await tx.query(SEAL_KEY, [approver.id, entry.keyId, this.seal.sealKey(approver.id, entry)]);
      }
    });
    return (await this.get(approver.id)) ?? approver;
  }

  /** The approver with only its sealed keys, or `undefined` when its own row is unsealed. */
  #verified(row: ApproverRow): Approver | undefined {
    const { approver, problems } = this.#checked(row);
    for (const problem of problems) this.#options.onUnsealed?.(problem);
    if (problems.some((problem) => problem.keyId === undefined)) return undefined;
    const unsealed = new Set(problems.map((problem) => problem.keyId));
    return { ...approver, keys: approver.keys.filter((key) => !unsealed.has(key.keyId)) };
  }

  #problems(row: ApproverRow): UnsealedEntry[] {
    return this.#checked(row).problems;
  }

  /** The row decoded once, with every entry of it whose seal does not verify. */
  #checked(row: ApproverRow): { approver: Approver; problems: UnsealedEntry[] } {
    const { approver, seal, keySeals } = rowEntries(row);
    const problems: UnsealedEntry[] = [];
    if (!this.seal.checkApprover(approver, seal)) problems.push({ approver: approver.id });
    approver.keys.forEach((key, index) => {
      if (!this.seal.checkKey(approver.id, key, keySeals[index] ?? null)) {
        problems.push({ approver: approver.id, keyId: key.keyId });
      } else if (predates(key, approver)) {
        // A key seal binds an approver id, not an entry: both seals date their entry, so a key
        // added before its approver was is an earlier approver's, put back under a namesake.
        problems.push({ approver: approver.id, keyId: key.keyId, reason: 'predates_approver' });
      }
    });
    return { approver, problems };
  }
}

/** Whether `key` was added before the approver entry it is read under (both times sealed). */
function predates(key: ApproverKey, approver: Approver): boolean {
  return Date.parse(key.addedAt) < Date.parse(approver.addedAt);
}

async function insertKey(
  db: Queryable,
  approverId: string,
  key: ApproverKey,
  seal: string,
): Promise<void> {
  const inserted = await db.query(INSERT_KEY, [
    key.keyId,
    approverId,
    key.type,
    key.publicKey,
    key.addedAt,
    key.type === 'webauthn'
      ? JSON.stringify({
          credentialId: key.credentialId,
          rpId: key.rpId,
          algorithm: key.algorithm,
          ...(key.transports ? { transports: key.transports } : {}),
          ...(key.origins ? { origins: key.origins } : {}),
        })
      : null,
    seal,
    key.sponsor ?? null,
  ]);
  if (inserted.rowCount === 0) {
    const { rows } = await db.query<{ approver_id: string }>(SELECT_KEY_OWNER, [key.keyId]);
    throw ambiguous(`key ${key.keyId} already belongs to "${rows[0]?.approver_id}"`);
  }
}
