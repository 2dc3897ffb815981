import { createDatabase, type Database, DEFAULT_PGLITE_DIR, migrate } from '../db/index.js';
import { VeridexError } from '../errors/index.js';

/** `--database-url` help text shared by commands that open the database. */
export const DATABASE_OPTION_HELP = `  --database-url URL   PostgreSQL URL (default: $DATABASE_URL, else PGlite in ${DEFAULT_PGLITE_DIR})`;

/**
 * Opens (and migrates) the database a command works on: the URL given, else the rule every
 * `createDatabase()` call follows — `DATABASE_URL`, else the embedded PGlite directory the
 * demo and the prebuilt agent use (through its holder's socket when another process has it).
 */
export async function openCommandDatabase(
  url: string | undefined,
  options: {
    /**
     * Share the embedded database with the app (`veridex serve`): opened first, it is exposed
     * on a local socket so the app's `createDatabase()` connects through it; opened second, it
     * connects through the app's (README "Approvals inbox"). Either order of starting works.
     */
    share?: boolean;
    /** Where a warning goes (sharing needs the optional `@electric-sql/pglite-socket`). */
    warn?: (line: string) => void;
  } = {},
): Promise<Database> {
  const embedded = url === undefined && !process.env.DATABASE_URL?.trim();
  let db: Database;
  if (options.share && embedded) {
    try {
      db = await createDatabase({ expose: true });
    } catch (error) {
      if (!VeridexError.is(error, 'config_invalid') || !/pglite-socket/.test(error.message)) {
        throw error;
      }
      options.warn?.(
        `warning: ${error.message} Without it the app cannot open ${DEFAULT_PGLITE_DIR} while this runs.`,
      );
      db = await createDatabase({});
    }
  } else {
    db = await createDatabase(url === undefined ? {} : { url });
  }
  await migrate(db);
  return db;
}
