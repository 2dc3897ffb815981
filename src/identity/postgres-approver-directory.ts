import type { Database, Queryable } from '../db/index.js';
import type { Approver, ApproverInit, ApproverKey, PasskeyInit } from './approver.js';
import {
  type ApproverDirectory,
  ambiguous,
  buildApprover,
  buildKey,
  unknownApprover,
} from './approver-directory.js';
import { identityKey, tryIdentityKey } from './canonical-identity.js';
import {
  INSERT_APPROVER,
  INSERT_KEY,
  REVOKE_APPROVER,
  REVOKE_KEY,
  SELECT_ALL,
  SELECT_BY_IDENTITY_KEY,
  SELECT_BY_KEY_ID,
  SELECT_ID_BY_IDENTITY_KEY,
  SELECT_KEY_OWNER,
} from './sql.js';

interface ApproverRow {
  id: string;
  display_name: string;
  roles: string[];
  added_at: Date;
  revoked_at: Date | null;
  keys: Array<{
    type: ApproverKey['type'];
    keyId: string;
    publicKey: string;
    addedAt: string;
    revokedAt: string | null;
    credential: Record<string, unknown> | null;
  }>;
}

function fromRow(row: ApproverRow): Approver {
  return {
    id: row.id,
    displayName: row.display_name,
    roles: row.roles,
    keys: row.keys.map(
      ({ revokedAt, credential, ...key }) =>
        ({
          ...key,
          // A passkey's credential id, relying party, algorithm and transports.
          ...(credential ?? {}),
          addedAt: new Date(key.addedAt).toISOString(),
          ...(revokedAt ? { revokedAt: new Date(revokedAt).toISOString() } : {}),
        }) as ApproverKey,
    ),
    addedAt: row.added_at.toISOString(),
    ...(row.revoked_at ? { revokedAt: row.revoked_at.toISOString() } : {}),
  };
}

/**
 * An {@link ApproverDirectory} in the database (`veridex_approvers`, `veridex_approver_keys`;
 * run `migrate()` first), shared by every process — the app, `veridex approvals`, the inbox.
 * Uniqueness of identities (by confusable skeleton) and keys is enforced by the database.
 */
export class PostgresApproverDirectory implements ApproverDirectory {
  readonly #db: Database;
  readonly #now: () => Date;

  constructor(db: Database, options: { now?: () => Date } = {}) {
    this.#db = db;
    this.#now = options.now ?? (() => new Date());
  }

  async get(id: string): Promise<Approver | undefined> {
    const key = tryIdentityKey(id);
    if (key === undefined) return undefined;
    const { rows } = await this.#db.query<ApproverRow>(SELECT_BY_IDENTITY_KEY, [key]);
    return rows[0] && fromRow(rows[0]);
  }

  async findByKey(keyId: string): Promise<{ approver: Approver; key: ApproverKey } | undefined> {
    const { rows } = await this.#db.query<ApproverRow>(SELECT_BY_KEY_ID, [keyId]);
    const approver = rows[0] && fromRow(rows[0]);
    const key = approver?.keys.find((candidate) => candidate.keyId === keyId);
    return approver && key ? { approver, key } : undefined;
  }

  async list(): Promise<Approver[]> {
    const { rows } = await this.#db.query<ApproverRow>(SELECT_ALL);
    return rows.map(fromRow);
  }

  async add(init: ApproverInit): Promise<Approver> {
    const approver = buildApprover(init, this.#now());
    const key = identityKey(approver.id);
    await this.#db.transaction(async (tx) => {
      const inserted = await tx.query(INSERT_APPROVER, [
        approver.id,
        key,
        approver.displayName,
        JSON.stringify(approver.roles),
        approver.addedAt,
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
      for (const entry of approver.keys) await insertKey(tx, approver.id, entry);
    });
    return approver;
  }

  async addKey(id: string, publicKey: Uint8Array | string | PasskeyInit): Promise<Approver> {
    const approver = await this.get(id);
    if (!approver) throw unknownApprover(id);
    const key = buildKey(publicKey, this.#now().toISOString());
    await insertKey(this.#db, approver.id, key);
    return { ...approver, keys: [...approver.keys, key] };
  }

  async revoke(id: string, options: { keyId?: string } = {}): Promise<Approver> {
    const approver = await this.get(id);
    if (!approver) throw unknownApprover(id);
    const at = this.#now().toISOString();
    if (options.keyId === undefined) await this.#db.query(REVOKE_APPROVER, [approver.id, at]);
    else {
      const { rowCount } = await this.#db.query(REVOKE_KEY, [approver.id, options.keyId, at]);
      if (rowCount === 0) throw unknownApprover(`${id} with key ${options.keyId}`);
    }
    return (await this.get(approver.id))!;
  }
}

async function insertKey(db: Queryable, approverId: string, key: ApproverKey): Promise<void> {
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
        })
      : null,
  ]);
  if (inserted.rowCount === 0) {
    const { rows } = await db.query<{ approver_id: string }>(SELECT_KEY_OWNER, [key.keyId]);
    throw ambiguous(`key ${key.keyId} already belongs to "${rows[0]?.approver_id}"`);
  }
}
