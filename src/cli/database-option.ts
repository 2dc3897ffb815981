import { createDatabase, type Database, DEFAULT_PGLITE_DIR, migrate } from '../db/index.js';

/** `--database-url` help text shared by commands that open the database. */
export const DATABASE_OPTION_HELP = `  --database-url URL   PostgreSQL URL (default: $DATABASE_URL, else PGlite in ${DEFAULT_PGLITE_DIR})`;

/**
 * Opens (and migrates) the database a command works on: the URL given, else `DATABASE_URL`,
 * else the same embedded PGlite directory the demo and the prebuilt agent use.
 */
export async function openCommandDatabase(url: string | undefined): Promise<Database> {
  const resolved = url ?? process.env.DATABASE_URL;
  const db = await createDatabase(resolved ? { url: resolved } : { dataDir: DEFAULT_PGLITE_DIR });
  await migrate(db);
  return db;
}
