import type { QueryResult, QueryResultRow } from 'pg';

/** Anything that runs one SQL statement: a {@link Database} or the handle inside a transaction. */
export interface Queryable {
  /**
   * Runs one parameterised statement. Connection failures reject with `db_unavailable`,
   * SQL errors with `db_query_failed` (SQLSTATE in `details.sqlState`).
   */
  query<Row extends QueryResultRow = Record<string, unknown>>(
    text: string,
    params?: readonly unknown[],
    options?: QueryOptions,
  ): Promise<QueryResult<Row>>;
}

/** Options for {@link Queryable.query}. */
export interface QueryOptions {
  /**
   * Prepares the statement once per connection under this name and reuses it, which saves
   * parsing and planning on every call: for hot statements that run thousands of times.
   * One name must always stand for the same text.
   */
  prepareAs?: string;
}

/** Options for {@link Database.transaction}. */
export interface TransactionOptions {
  /** Defaults to PostgreSQL's default, `read committed`. */
  isolation?: 'read committed' | 'repeatable read' | 'serializable';
}

/**
 * The one database handle every persistent part of the library uses (checkpoints, audit,
 * approvals, idempotency, ceilings, memory). Same SQL on PostgreSQL and on embedded PGlite.
 */
export interface Database extends Queryable {
  /** `postgres` for a server reached over the network, `pglite` for embedded PGlite. */
  readonly kind: 'postgres' | 'pglite';
  /** The schema the library's tables live in (the only entry of `search_path`: no `public` fallback). */
  readonly schema: string;
  /** Runs `fn` inside BEGIN/COMMIT on one connection; any throw rolls back and re-throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** Releases connections (and the PGlite instance when this handle created it). */
  close(): Promise<void>;
  /**
   * Subscribes to PostgreSQL `NOTIFY`s on `channel` (a lower-case identifier); resolves with
   * the function that unsubscribes. Absent where notifications cannot reach this handle (a
   * pool you provided, PGlite reached through another process's socket): callers poll then.
   * A notification is a hint to look again, never a fact: anyone who may connect can send one.
   */
  listen?(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
}
