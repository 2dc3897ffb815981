import type pg from 'pg';
import type { Database, Queryable, QueryOptions, TransactionOptions } from './database.js';
import type { PoolDatabase } from './pool-database.js';
import { quoteIdentifier } from './schema-name.js';

/**
 * A {@link Database} over another process's PGlite, reached through the socket it exposes.
 * That PGlite has one session shared with its holder, so every statement runs inside a
 * transaction (the holder's socket gate keeps the session for the client until it ends) and
 * sets its `search_path` locally, whatever the holder left in the session.
 */
export class SharedSessionDatabase implements Database {
  readonly kind = 'pglite' as const;
  readonly schema: string;
  readonly #inner: PoolDatabase;

  constructor(inner: PoolDatabase) {
    this.#inner = inner;
    this.schema = inner.schema;
  }

  /** Where the database is, e.g. `./.veridex/db (through pid 123's socket)`. */
  get where(): string {
    return this.#inner.where;
  }

  query<Row extends pg.QueryResultRow = Record<string, unknown>>(
    text: string,
    params?: readonly unknown[],
    options?: QueryOptions,
  ): Promise<pg.QueryResult<Row>> {
    return this.transaction((tx) => tx.query<Row>(text, params, options));
  }

  transaction<T>(fn: (tx: Queryable) => Promise<T>, options?: TransactionOptions): Promise<T> {
    return this.#inner.transaction(async (tx) => {
      // The schema name was validated by createDatabase; the schema alone, without `public`.
      await tx.query(`SET LOCAL search_path TO ${quoteIdentifier(this.schema)}`);
      return fn(tx);
    }, options);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}
