import type pg from 'pg';
import { VeridexError } from '../errors/index.js';
import type { Database, Queryable, QueryOptions, TransactionOptions } from './database.js';
import { type DatabaseLocation, toDatabaseError } from './db-errors.js';
import { explainMissingName, mayMeanNotMigrated, type RunStatement } from './migration-state.js';
import type { SessionGate } from './session-gate.js';

/** How a {@link PoolDatabase} obtains and prepares connections. */
export interface PoolDatabaseConfig {
  pool: pg.Pool;
  location: DatabaseLocation;
  schema: string;
  /** Runs on every checked-out client before use (PGlite uses it to switch `search_path`). */
  prepare?: (client: pg.PoolClient) => Promise<void>;
  /**
   * Whether `prepareAs` names statements. Only for connections this handle opened to a
   * server: PGlite keeps statements in its one session while node-postgres clients over it
   * come and go, and a pool you provide may sit behind a proxy that cannot keep them.
   */
  namedStatements: boolean;
  /** Taken for every checkout when PGlite's one session is shared with socket clients. */
  session?: SessionGate;
  /** Runs once from {@link PoolDatabase.close}. */
  dispose: () => Promise<void>;
  /** Subscribes to notifications (see {@link Database.listen}); absent where they cannot arrive. */
  listen?: (channel: string, onNotify: (payload: string) => void) => Promise<() => Promise<void>>;
}

/** The {@link Database} implementation over a node-postgres pool, for both backends. */
export class PoolDatabase implements Database {
  readonly kind: Database['kind'];
  readonly schema: string;
  readonly #config: PoolDatabaseConfig;
  #closed: Promise<void> | undefined;

  /** See {@link Database.listen}. */
  readonly listen?: Database['listen'];

  constructor(config: PoolDatabaseConfig) {
    this.#config = config;
    this.kind = config.location.kind;
    this.schema = config.schema;
    if (config.listen) {
      const subscribe = config.listen;
      this.listen = (channel, onNotify) => subscribe(checkChannel(channel), onNotify);
    }
  }

  /** A human-readable location without credentials, e.g. `postgres://127.0.0.1:5432/test`. */
  get where(): string {
    return this.#config.location.where;
  }

  async query<Row extends pg.QueryResultRow = Record<string, unknown>>(
    text: string,
    params?: readonly unknown[],
    options?: QueryOptions,
  ): Promise<pg.QueryResult<Row>> {
    const query = this.#queryConfig(text, params, options);
    if (!this.#config.prepare) {
      try {
        return await this.#config.pool.query<Row>(query);
      } catch (error) {
        const failure = toDatabaseError(error, this.#config.location);
        if (!mayMeanNotMigrated(failure)) throw failure;
        throw await this.#explain(failure, (sql, values) =>
          this.#config.pool.query(sql, values as unknown[]),
        );
      }
    }
    return this.#withClient((client) => runQuery<Row>(client, query, this.#config.location));
  }

  async transaction<T>(
    fn: (tx: Queryable) => Promise<T>,
    options?: TransactionOptions,
  ): Promise<T> {
    return this.#withClient(async (client) => {
      const location = this.#config.location;
      const tx: Queryable = {
        query: (text, params, queryOptions) =>
          runQuery(client, this.#queryConfig(text, params, queryOptions), location),
      };
      const begin = options?.isolation
        ? `BEGIN ISOLATION LEVEL ${options.isolation.toUpperCase()}`
        : 'BEGIN';
      await tx.query(begin);
      try {
        const result = await fn(tx);
        await tx.query('COMMIT');
        return result;
      } catch (error) {
        // A failed ROLLBACK means the connection is gone; the original error is the useful one.
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }

  close(): Promise<void> {
    this.#closed ??= this.#config.dispose();
    return this.#closed;
  }

  #queryConfig(
    text: string,
    params: readonly unknown[] | undefined,
    options: QueryOptions | undefined,
  ): pg.QueryConfig {
    const name = this.#config.namedStatements ? options?.prepareAs : undefined;
    return {
      text,
      ...(params ? { values: params as unknown[] } : {}),
      ...(name ? { name } : {}),
    };
  }

  /** See {@link explainMissingName}: costs nothing unless a statement already failed. */
  #explain(error: VeridexError, run: RunStatement): Promise<VeridexError> {
    return explainMissingName(error, run, this.schema, this.#config.location);
  }

  async #withClient<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const session = this.#config.session;
    if (!session) return this.#checkout(fn);
    // A fresh owner per checkout: two checkouts of this process take turns like any others.
    const owner = {};
    await session.acquire(owner);
    try {
      return await this.#checkout(fn);
    } finally {
      session.release(owner);
    }
  }

  async #checkout<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const location = this.#config.location;
    let broken: Error | undefined;
    // node-postgres emits 'error' on a client whose connection dies while no statement runs on
    // it — a transaction between two statements when the server restarts or the backend is
    // terminated — and the pool listens only to idle clients: without a listener of ours the
    // process would crash. The client is then no longer queryable, so the next statement fails
    // (db_unavailable) and the client is destroyed on release.
    const onError = (error: unknown) => {
      broken ??= toDatabaseError(error, location);
    };
    // Attached in the pool's callback, not after `await pool.connect()`: the pool hands a
    // client over while it is still parsing that connection's input (the previous user's
    // ReadyForQuery), and the server's termination notice may be the next message in the same
    // chunk — it would be emitted before an awaiting caller got to attach anything.
    const client = await new Promise<pg.PoolClient>((resolve, reject) => {
      this.#config.pool.connect((error, connected) => {
        if (error || !connected) {
          reject(toDatabaseError(error ?? new Error('no client'), location));
          return;
        }
        connected.on('error', onError);
        resolve(connected);
      });
    });
    try {
      await this.#config.prepare?.(client).catch((error: unknown) => {
        throw toDatabaseError(error, location);
      });
      return await fn(client);
    } catch (error) {
      if (VeridexError.is(error, 'db_unavailable')) broken ??= error;
      // A transaction has rolled back by now, so the client can run the check.
      if (broken || !mayMeanNotMigrated(error)) throw error;
      throw await this.#explain(error, (sql, values) => client.query(sql, values as unknown[]));
    } finally {
      client.removeListener('error', onError);
      // Passing the error destroys the client instead of returning a dead socket to the pool.
      client.release(broken);
    }
  }
}

async function runQuery<Row extends pg.QueryResultRow>(
  client: pg.PoolClient,
  query: pg.QueryConfig,
  location: DatabaseLocation,
): Promise<pg.QueryResult<Row>> {
  try {
    return await client.query<Row>(query);
  } catch (error) {
    throw toDatabaseError(error, location);
  }
}

/** A channel name is spliced into `LISTEN`: only a plain lower-case identifier is accepted. */
function checkChannel(channel: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(channel)) {
    throw new VeridexError(
      'config_invalid',
      `Notification channel "${String(channel).slice(0, 80)}" must be a lower-case identifier.`,
    );
  }
  return channel;
}
