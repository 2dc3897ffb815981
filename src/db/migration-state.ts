import { VeridexError } from '../errors/index.js';
import type { DatabaseLocation } from './db-errors.js';
import { listMigrations } from './migrate.js';
import { quoteIdentifier } from './schema-name.js';

/**
 * SQLSTATEs a statement gets when a name it uses is not in the handle's schema: undefined_table
 * (42P01) for a table, invalid_schema_name (3F000) for `CREATE` when the schema does not exist
 * ("no schema has been selected to create in"). With `search_path` set to the configured schema
 * alone (README, Database), this is how an unmigrated schema first shows itself.
 */
const MISSING_NAME_STATES = new Set(['42P01', '3F000']);

/** True when `error` is a `db_query_failed` that a missing migration would explain. */
export function mayMeanNotMigrated(error: unknown): error is VeridexError {
  return (
    VeridexError.is(error, 'db_query_failed') &&
    MISSING_NAME_STATES.has(String(error.details.sqlState))
  );
}

/** Runs one statement outside any transaction, on whatever connection the caller holds. */
export type RunStatement = (
  text: string,
  params: readonly unknown[],
) => Promise<{ rows: Array<Record<string, unknown>> }>;

/**
 * Explains a missing-name failure: `db_not_migrated` when the schema lacks the migration table
 * or any of this library's migrations, else the original error (a table dropped by hand in a
 * migrated schema is not fixed by migrating). Runs only after a statement failed, so the
 * success path pays no round trip; names are schema-qualified, so `search_path` is irrelevant.
 */
export async function explainMissingName(
  error: VeridexError,
  run: RunStatement,
  schema: string,
  location: DatabaseLocation,
): Promise<VeridexError> {
  let missing: number[];
  try {
    const table = await run(
      `SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = $1 AND tablename = 'veridex_migrations'`,
      [schema],
    );
    if (table.rows.length === 0) return notMigrated(schema, location, undefined, error);
    const { rows } = await run(
      `SELECT version FROM ${quoteIdentifier(schema)}.veridex_migrations`,
      [],
    );
    const applied = new Set(rows.map((row) => Number(row.version)));
    missing = listMigrations()
      .map((migration) => migration.version)
      .filter((version) => !applied.has(version));
  } catch {
    // The check itself failed (connection lost): the original error is the useful one.
    return error;
  }
  return missing.length > 0 ? notMigrated(schema, location, missing, error) : error;
}

function notMigrated(
  schema: string,
  location: DatabaseLocation,
  missing: number[] | undefined,
  cause: VeridexError,
): VeridexError {
  const state =
    missing === undefined
      ? 'was never migrated'
      : `is missing migration${missing.length > 1 ? 's' : ''} ${missing.map((version) => String(version).padStart(4, '0')).join(', ')}`;
  return new VeridexError(
    'db_not_migrated',
    `Schema "${schema}" at ${location.where} ${state}, so the library's tables are not there (nothing was written anywhere else). Run \`npx veridex migrate\` with the same database URL and schema, or \`await migrate(db)\` on this handle, before using it.`,
    {
      cause,
      details: { schema, where: location.where, kind: location.kind, missing: missing ?? 'all' },
    },
  );
}
