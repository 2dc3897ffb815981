import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { VeridexError } from '../errors/index.js';
import type { Database } from './database.js';
import { quoteIdentifier } from './schema-name.js';

/** One numbered, append-only schema change. */
export interface Migration {
  /** The number prefix of the file name; also the order. */
  version: number;
  /** The file name, e.g. `0001_audit.sql`. */
  name: string;
  sql: string;
  /** SHA-256 of `sql`, recorded so that an edited, already-applied migration is caught. */
  checksum: string;
}

/** What {@link migrate} did. */
export interface MigrateResult {
  /** Names of the migrations this call applied, in order (empty when already up to date). */
  applied: string[];
}

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));

let cachedMigrations: readonly Migration[] | undefined;

/** The library's migrations, read once from `src/db/migrations/*.sql` and ordered by version. */
export function listMigrations(): readonly Migration[] {
  cachedMigrations ??= readdirSync(MIGRATIONS_DIR)
    .filter((file) => /^\d{4}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((name) => {
      const sql = readFileSync(MIGRATIONS_DIR + name, 'utf8');
      return {
        version: Number(name.slice(0, 4)),
        name,
        sql,
        checksum: createHash('sha256').update(sql).digest('hex'),
      };
    });
  return cachedMigrations;
}

const migrated = new WeakSet<Database>();

/**
 * Brings the handle's schema up to date. Each missing migration runs in one transaction
 * under an advisory lock, so two processes migrating at once are safe; running it again
 * is a no-op. Fails with `migration_mismatch` if an applied migration was edited.
 *
 * @example
 * const db = await createDatabase();
 * await migrate(db); // { applied: ['0001_audit.sql', ...] } the first time, [] after
 */
export async function migrate(db: Database): Promise<MigrateResult> {
  if (migrated.has(db)) return { applied: [] };
  const migrations = listMigrations();
  const result = await db.transaction(async (tx) => {
    // Keyed by schema so that tests migrating isolated schemas do not queue on each other.
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`veridex.migrate:${db.schema}`]);
    await tx.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdentifier(db.schema)}`);
    await tx.query(`CREATE TABLE IF NOT EXISTS ${quoteIdentifier(db.schema)}.veridex_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      checksum text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const { rows } = await tx.query<{ version: number; name: string; checksum: string }>(
      `SELECT version, name, checksum FROM ${quoteIdentifier(db.schema)}.veridex_migrations`,
    );
    const applied = new Map(rows.map((row) => [row.version, row]));
    const names: string[] = [];
    for (const migration of migrations) {
      const previous = applied.get(migration.version);
      if (previous) {
        if (previous.checksum !== migration.checksum) {
          throw new VeridexError(
            'migration_mismatch',
            `Migration ${migration.name} was changed after it was applied to schema "${db.schema}" (applied as ${previous.name}). Migrations are append-only: restore the file and add a new migration instead.`,
            { details: { version: migration.version, schema: db.schema } },
          );
        }
        continue;
      }
      await tx.query(migration.sql);
      await tx.query(
        `INSERT INTO ${quoteIdentifier(db.schema)}.veridex_migrations (version, name, checksum) VALUES ($1, $2, $3)`,
        [migration.version, migration.name, migration.checksum],
      );
      names.push(migration.name);
    }
    return { applied: names };
  });
  migrated.add(db);
  return result;
}
