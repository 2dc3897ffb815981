import type { QueryResult } from 'pg';
import type { Database, QueryOptions } from '../../src/db/index.js';

/**
 * A handle on the same database whose `query` calls go through `intercept` (which runs them
 * on `db` itself, or not); transactions and close pass straight through. For tests that count,
 * record or wrap the statements a component sends.
 */
export function interceptQueries(
  db: Database,
  intercept: (
    text: string,
    params: readonly unknown[] | undefined,
    options: QueryOptions | undefined,
  ) => Promise<QueryResult>,
): Database {
  return {
    kind: db.kind,
    schema: db.schema,
    query: ((text: string, params?: readonly unknown[], options?: QueryOptions) =>
      intercept(text, params, options)) as Database['query'],
    transaction: (fn, options) => db.transaction(fn, options),
    close: () => db.close(),
  };
}
