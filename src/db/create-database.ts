import { mkdirSync } from 'node:fs';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import pg from 'pg';
import { VeridexError } from '../errors/index.js';
import type { Database } from './database.js';
import { PoolDatabase } from './pool-database.js';

/** Where PGlite keeps its files when nothing is configured. */
export const DEFAULT_PGLITE_DIR = './.veridex/db';

/** Options for {@link createDatabase}. The first of `url`, `pool`, `pglite`, `dataDir` given wins. */
export interface CreateDatabaseOptions {
  /** A `postgres://` URL; the handle owns a `pg.Pool` for it. `?schema=name` selects the schema. */
  url?: string;
  /** A pool you own; `close()` leaves it open. Its connections' `search_path` decides the schema. */
  pool?: pg.Pool;
  /** A PGlite instance you own; `close()` leaves it open. Handles over one instance share its single session safely. */
  pglite?: PGlite;
  /** PGlite data directory (`memory://` for in-memory). Default `./.veridex/db`. */
  dataDir?: string;
  /** PGlite extensions to load, e.g. `{ vector }` from `@electric-sql/pglite-pgvector`. */
  extensions?: PGliteOptions['extensions'];
  /** Schema for the library's tables (created by `migrate()`). Default `public`. */
  schema?: string;
  /** Connections in a URL pool. Default 10. */
  maxConnections?: number;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Opens the database every persistent part of the library uses: PostgreSQL through `pg`
 * for a URL, or embedded PGlite through PGlite's node-postgres adapter (same SQL on both).
 * With no options it opens PGlite at `./.veridex/db`.
 *
 * @throws VeridexError `config_invalid` for a bad schema name; `db_unavailable` when PGlite cannot start.
 * @example
 * const db = await createDatabase({ url: process.env.DATABASE_URL });
 * await migrate(db);
 */
export async function createDatabase(options: CreateDatabaseOptions = {}): Promise<Database> {
  const url = options.url ? new URLOrText(options.url) : undefined;
  const schema = options.schema ?? url?.schema ?? 'public';
  if (!SCHEMA_NAME.test(schema)) {
    throw new VeridexError(
      'config_invalid',
      `Schema name "${schema}" is not allowed: use lower-case letters, digits and underscores, starting with a letter or underscore.`,
    );
  }
  if (url) return openUrl(url.connectionString, schema, options.maxConnections ?? 10);
  if (options.pool) {
    const pool = options.pool;
    return new PoolDatabase({
      pool,
      schema,
      location: { kind: 'postgres', where: 'the pool you provided' },
      namedStatements: false,
      dispose: async () => undefined,
    });
  }
  if (options.pglite) return openPglite(options.pglite, schema, false);
  const dataDir = options.dataDir ?? DEFAULT_PGLITE_DIR;
  if (!dataDir.startsWith('memory://')) mkdirSync(dataDir, { recursive: true });
  let instance: PGlite;
  try {
    instance = await PGlite.create({
      dataDir,
      ...(options.extensions ? { extensions: options.extensions } : {}),
    });
  } catch (error) {
    throw new VeridexError(
      'db_unavailable',
      `PGlite could not open ${dataDir}: ${error instanceof Error ? error.message : String(error)}. Check that the directory is writable and not open in another process.`,
      { cause: error, details: { where: dataDir, kind: 'pglite' } },
    );
  }
  return openPglite(instance, schema, true);
}

/**
 * A database URL with our one extension: `?schema=name` picks the schema (the parameter is
 * removed before node-postgres sees the URL). Text that is not a URL is passed through, so
 * node-postgres reports it.
 */
class URLOrText {
  readonly connectionString: string;
  readonly schema: string | undefined;

  constructor(text: string) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(text);
    } catch {
      parsed = undefined;
    }
    const schema = parsed?.searchParams.get('schema') ?? undefined;
    if (parsed && schema !== undefined) parsed.searchParams.delete('schema');
    this.connectionString = parsed && schema !== undefined ? parsed.toString() : text;
    this.schema = schema;
  }
}

function openUrl(url: string, schema: string, max: number): Database {
  let where: string;
  try {
    const parsed = new URL(url);
    where = `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    throw new VeridexError(
      'config_invalid',
      'The database URL is not a valid URL; expected postgres://user@host:port/database.',
    );
  }
  const pool = new pg.Pool({
    connectionString: url,
    max,
    // Quoted so that a schema named like a keyword still works; the name was validated above.
    options: `-c search_path="${schema}",public`,
  });
  // Without a listener an idle client's socket error would crash the process; the next
  // checkout opens a fresh connection instead.
  pool.on('error', () => undefined);
  return new PoolDatabase({
    pool,
    schema,
    location: { kind: 'postgres', where },
    namedStatements: true,
    dispose: () => pool.end(),
  });
}

/** One pool per PGlite instance: PGlite has a single session, so all handles must queue on it. */
interface SharedPglite {
  pool: pg.Pool;
  currentSchema: string | undefined;
  handles: number;
}

const sharedPools = new WeakMap<PGlite, SharedPglite>();

function openPglite(instance: PGlite, schema: string, owned: boolean): Database {
  let shared = sharedPools.get(instance);
  if (!shared) {
    const pool = new pg.Pool({ ...createPgConfig(instance), max: 1 });
    pool.on('error', () => undefined);
    shared = { pool, currentSchema: undefined, handles: 0 };
    sharedPools.set(instance, shared);
  }
  const state = shared;
  state.handles += 1;
  const where = instance.dataDir ?? 'memory://';
  return new PoolDatabase({
    pool: state.pool,
    schema,
    location: { kind: 'pglite', where },
    namedStatements: false,
    // The pool has one client, so tracking the session's search_path here is exact.
    prepare: async (client) => {
      if (state.currentSchema === schema) return;
      await client.query(`SET search_path TO "${schema}", public`);
      state.currentSchema = schema;
    },
    dispose: async () => {
      state.handles -= 1;
      if (state.handles > 0) return;
      sharedPools.delete(instance);
      await state.pool.end();
      if (owned) await instance.close();
    },
  });
}
