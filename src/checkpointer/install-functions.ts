import type { Database } from '../db/index.js';
import { EXISTING_FUNCTIONS, LOCK_FUNCTION_INSTALL, STORED_FUNCTIONS } from './sql.js';

const installed = new WeakSet<Database>();

/**
 * Creates the checkpointer's PL/pgSQL functions (see sql.ts) that the schema lacks. Runs
 * under an advisory lock, so several processes setting up one schema at once are safe;
 * running it again is one cheap query.
 */
export async function installFunctions(db: Database): Promise<void> {
  if (installed.has(db)) return;
  await db.transaction(async (tx) => {
    await tx.query(LOCK_FUNCTION_INSTALL);
    const { rows } = await tx.query<{ name: string }>(EXISTING_FUNCTIONS, [
      STORED_FUNCTIONS.map((stored) => stored.name),
    ]);
    const existing = new Set(rows.map((row) => row.name));
    for (const stored of STORED_FUNCTIONS) {
      if (!existing.has(stored.name)) await tx.query(stored.definition);
    }
  });
  installed.add(db);
}
