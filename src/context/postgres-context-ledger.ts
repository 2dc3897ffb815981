import { canonicalJson } from '../audit/index.js';
import type { Database, Queryable } from '../db/index.js';
import {
  type ContextLedger,
  checkCommit,
  type LedgerEntry,
  type PruneOptions,
  versionsToPrune,
} from './context-ledger.js';
import { type ContextEnvelope, envelopeFields } from './envelope.js';
import {
  DELETE_VERSIONS,
  GET_ENTRY,
  HEAD_ENTRY,
  INSERT_ENVELOPE,
  LIST_ENTRIES,
  LIST_VERSIONS_AND_PARENTS,
  LOCK_LEDGER,
  MARK_ROLLED_BACK,
  MAX_VERSION,
} from './sql.js';

interface EntryRow {
  version: string;
  envelope: string;
  committed_at: Date | string;
  rolled_back_at: Date | string | null;
  rollback_reason: string | null;
}

/**
 * A {@link ContextLedger} in `veridex_context_ledger` (PostgreSQL or PGlite; run `migrate()`
 * first). Writers of one ledger are serialised by a transaction-scoped advisory lock, so
 * concurrent commits from several processes keep versions strictly growing. Envelopes are
 * stored as canonical JSON, byte for byte what was signed.
 *
 * @example
 * const ledger = new PostgresContextLedger(db);
 * await ledger.commit(threadId, envelope);
 */
export class PostgresContextLedger implements ContextLedger {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  commit<Payload>(
    ledgerId: string,
    envelope: ContextEnvelope<Payload>,
  ): Promise<LedgerEntry<Payload>> {
    return this.#db.transaction(async (tx) => {
      await lock(tx, ledgerId);
      const { rows } = await tx.query<{ max_version: string | null }>(MAX_VERSION, [ledgerId]);
      const maxVersion = rows[0]?.max_version;
      const existing = await getEntry<Payload>(tx, ledgerId, envelope.version);
      const repeat = checkCommit(
        envelope,
        existing,
        maxVersion == null ? undefined : Number(maxVersion),
      );
      if (repeat) return repeat;
      const text = canonicalJson(envelopeFields(envelope));
      await tx.query(INSERT_ENVELOPE, [
        ledgerId,
        envelope.version,
        envelope.keyId,
        envelope.signature,
        envelope.parents ?? [],
        text,
      ]);
      return (await getEntry<Payload>(tx, ledgerId, envelope.version))!;
    });
  }

  async head<Payload = unknown>(ledgerId: string): Promise<ContextEnvelope<Payload> | undefined> {
    const { rows } = await this.#db.query<EntryRow>(HEAD_ENTRY, [ledgerId]);
    return rows[0] ? toEntry<Payload>(rows[0]).envelope : undefined;
  }

  get<Payload = unknown>(
    ledgerId: string,
    version: number,
  ): Promise<LedgerEntry<Payload> | undefined> {
    return getEntry<Payload>(this.#db, ledgerId, version);
  }

  async list<Payload = unknown>(ledgerId: string): Promise<LedgerEntry<Payload>[]> {
    const { rows } = await this.#db.query<EntryRow>(LIST_ENTRIES, [ledgerId]);
    return rows.map((row) => toEntry<Payload>(row));
  }

  rollback<Payload = unknown>(
    ledgerId: string,
    reason?: string,
  ): Promise<ContextEnvelope<Payload> | undefined> {
    return this.#db.transaction(async (tx) => {
      await lock(tx, ledgerId);
      const { rows } = await tx.query<EntryRow>(HEAD_ENTRY, [ledgerId]);
      if (rows[0]) await tx.query(MARK_ROLLED_BACK, [ledgerId, rows[0].version, reason ?? null]);
      const after = await tx.query<EntryRow>(HEAD_ENTRY, [ledgerId]);
      return after.rows[0] ? toEntry<Payload>(after.rows[0]).envelope : undefined;
    });
  }

  async nextVersion(ledgerId: string): Promise<number> {
    const { rows } = await this.#db.query<{ max_version: string | null }>(MAX_VERSION, [ledgerId]);
    return rows[0]?.max_version === null || rows[0] === undefined
      ? 0
      : Number(rows[0].max_version) + 1;
  }

  prune(ledgerId: string, options: PruneOptions): Promise<number[]> {
    return this.#db.transaction(async (tx) => {
      await lock(tx, ledgerId);
      const { rows } = await tx.query<{ version: string; parents: string[]; rolled_back: boolean }>(
        LIST_VERSIONS_AND_PARENTS,
        [ledgerId],
      );
      const pruned = versionsToPrune(
        rows.map((row) => ({
          version: Number(row.version),
          parents: row.parents.map(Number),
          rolledBack: row.rolled_back,
        })),
        options,
      );
      if (pruned.length > 0) await tx.query(DELETE_VERSIONS, [ledgerId, pruned]);
      return pruned.sort((a, b) => a - b);
    });
  }
}

async function getEntry<Payload>(
  queryable: Queryable,
  ledgerId: string,
  version: number,
): Promise<LedgerEntry<Payload> | undefined> {
  const { rows } = await queryable.query<EntryRow>(GET_ENTRY, [ledgerId, version]);
  return rows[0] ? toEntry<Payload>(rows[0]) : undefined;
}

function lock(tx: Queryable, ledgerId: string) {
  return tx.query(LOCK_LEDGER, [`veridex.ledger:${ledgerId}`]);
}

function toEntry<Payload>(row: EntryRow): LedgerEntry<Payload> {
  const entry: LedgerEntry<Payload> = {
    envelope: JSON.parse(row.envelope) as ContextEnvelope<Payload>,
    committedAt: new Date(row.committed_at).toISOString(),
    rolledBack: row.rolled_back_at !== null,
  };
  if (row.rollback_reason !== null) entry.rollbackReason = row.rollback_reason;
  return entry;
}
