import type { QueryResult, QueryResultRow } from 'pg';
import type { Database, Queryable } from '../db/index.js';
import {
  EXISTING_FUNCTIONS,
  LOCK_FUNCTION_INSTALL,
  STORED_FUNCTIONS,
  type StoredFunction,
} from './sql.js';

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

/**
 * Calls one of the checkpointer's functions as a prepared statement (one per connection,
 * named after the function, whose name changes with its definition): the hot paths then
 * skip parsing and planning the call.
 */
export function callStored<Row extends QueryResultRow = Record<string, unknown>>(
  db: Queryable,
  stored: StoredFunction,
  params: readonly unknown[],
): Promise<QueryResult<Row>> {
  return db.query<Row>(stored.call, params, { prepareAs: stored.name });
}
