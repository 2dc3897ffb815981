import { createDatabase, type Database, DEFAULT_PGLITE_DIR, migrate } from '../db/index.js';

/** `--database-url` help text shared by commands that open the database. */
export const DATABASE_OPTION_HELP = `  --database-url URL   PostgreSQL URL (default: $DATABASE_URL, else PGlite in ${DEFAULT_PGLITE_DIR})`;

/**
 * Opens (and migrates) the database a command works on: the URL given, else the rule every
 * `createDatabase()` call follows — `DATABASE_URL`, else the embedded PGlite directory the
 * demo and the prebuilt agent use (through its holder's socket when another process has it).
 */
export async function openCommandDatabase(url: string | undefined): Promise<Database> {
  const db = await createDatabase(url === undefined ? {} : { url });
  await migrate(db);
  return db;
}
