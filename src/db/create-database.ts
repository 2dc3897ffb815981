import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import pg from 'pg';
import { VeridexError } from '../errors/index.js';
import type { Database } from './database.js';
import { type CreateDatabaseOptions, resolveDatabaseTarget } from './database-options.js';
import { inUseError, PgliteLock, type PgliteLockHolder } from './pglite-lock.js';
import { type ExposedPglite, exposePglite } from './pglite-socket.js';
import { rearmPgliteTimers, unrefPgliteTimers } from './pglite-timers.js';
import { PoolDatabase } from './pool-database.js';
import { checkSchemaName, quoteIdentifier, searchPathOption } from './schema-name.js';
import { SessionGate } from './session-gate.js';
import { SharedSessionDatabase } from './shared-session-database.js';

/**
 * Opens the database every persistent part of the library uses: PostgreSQL through `pg`
 * for a URL, or embedded PGlite through PGlite's node-postgres adapter (same SQL on both).
 * With no location it follows one rule, shared with the `veridex` command: `DATABASE_URL`
 * when it is set (and not empty), else PGlite at `./.veridex/db`.
 *
 * @throws VeridexError `config_invalid` for unknown or malformed options and bad schema names;
 * `db_unavailable` when PGlite cannot start.
 * @example
 * const db = await createDatabase(); // DATABASE_URL, else ./.veridex/db
 * await migrate(db);
 */
export async function createDatabase(options: CreateDatabaseOptions = {}): Promise<Database> {
  const target = resolveDatabaseTarget(options);
  const url = target.kind === 'url' ? new URLOrText(target.url) : undefined;
  const schema = options.schema ?? url?.schema ?? 'public';
  checkSchemaName(schema);
  if (target.kind === 'url') {
    return openUrl(url!.connectionString, schema, options.maxConnections ?? 10);
  }
  if (target.kind === 'pool') {
    const pool = target.pool;
    return new PoolDatabase({
      pool,
      schema,
      location: { kind: 'postgres', where: 'the pool you provided' },
      namedStatements: false,
      dispose: async () => undefined,
    });
  }
  if (target.kind === 'pglite') return openPglite(target.pglite, schema, { owned: false });
  const dataDir = target.dataDir;
  if (dataDir.startsWith('memory://')) {
    if (options.expose !== undefined) {
      throw new VeridexError('config_invalid', 'expose needs an on-disk dataDir, not memory://.');
    }
    return openPglite(await startPglite(dataDir, options), schema, { owned: true });
  }
  mkdirSync(dirname(resolve(dataDir)), { recursive: true });
  const probe = PgliteLock.probe(dataDir);
  if (probe.state === 'held') {
    if (probe.holder.socket) return openThroughSocket(dataDir, probe.holder, schema);
    throw inUseError(dataDir, probe.holder, probe.lockFile);
  }
  const { lock } = probe;
  try {
    mkdirSync(dataDir, { recursive: true });
    const instance = await startPglite(dataDir, options);
    const gate = new SessionGate();
    let exposed: ExposedPglite | undefined;
    if (options.expose !== undefined) {
      try {
        exposed = await exposePglite(instance, gate, options.expose, dataDir);
      } catch (error) {
        await instance.close();
        throw error;
      }
      lock.advertise(exposed.url);
    }
    return openPglite(instance, schema, {
      owned: true,
      gate,
      // The socket closes first (its clients' transactions roll back), the lock goes last.
      beforeClose: async () => exposed?.close(),
      afterClose: () => lock.release(),
    });
  } catch (error) {
    lock.release();
    throw error;
  }
}

async function startPglite(dataDir: string, options: CreateDatabaseOptions): Promise<PGlite> {
  let instance: PGlite;
  try {
    instance = new PGlite({
      dataDir,
      ...(options.extensions ? { extensions: options.extensions } : {}),
    });
    // Before start-up runs its first statement, so no timer of it ever holds the process.
    unrefPgliteTimers(instance);
    await instance.waitReady;
    await rearmPgliteTimers(instance);
  } catch (error) {
    throw new VeridexError(
      'db_unavailable',
      `PGlite could not open ${dataDir}: ${error instanceof Error ? error.message : String(error)}. Check that the directory is writable.`,
      { cause: error, details: { where: dataDir, kind: 'pglite' } },
    );
  }
  return instance;
}

/** A handle on another process's PGlite, through the socket its lock file advertises. */
function openThroughSocket(dataDir: string, holder: PgliteLockHolder, schema: string): Database {
  const pool = new pg.Pool({ connectionString: holder.socket, max: 1, allowExitOnIdle: true });
  pool.on('error', () => undefined);
  const where = `${dataDir} (through the socket of pid ${holder.pid})`;
  return new SharedSessionDatabase(
    new PoolDatabase({
      pool,
      schema,
      location: {
        kind: 'pglite',
        where,
        hint: `Check that process ${holder.pid} on ${holder.host}, which holds the database, is still running; retry once it has exited.`,
      },
      // Named statements would outlive this client in the holder's one session.
      namedStatements: false,
      dispose: () => pool.end(),
    }),
  );
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
  let hint: string | undefined;
  try {
    const parsed = new URL(url);
    where = `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
    // node-postgres then falls back to $PGUSER / $USER, and with neither the server answers
    // "no PostgreSQL user name specified in startup packet".
    if (parsed.username === '' && !parsed.searchParams.has('user')) {
      const fallback = process.env.PGUSER
        ? `used PGUSER (${process.env.PGUSER})`
        : process.env.USER
          ? `used your login name (${process.env.USER})`
          : 'sent none (neither PGUSER nor USER is set)';
      hint = `The URL names no user, so node-postgres ${fallback}: put the user in the URL, e.g. postgres://postgres@${parsed.host || '127.0.0.1:5432'}${parsed.pathname}.`;
    }
  } catch {
    throw new VeridexError(
      'config_invalid',
      'The database URL is not a valid URL; expected postgres://user@host:port/database.',
    );
  }
  const pool = new pg.Pool({
    connectionString: url,
    max,
    // Quoted (and escaped for libpq) so that any schema name PostgreSQL accepts works.
    // The configured schema alone, never `public` after it: in a schema nobody migrated, a
    // fall-through would write audit events and approvals where nobody looks (README, Database).
    options: searchPathOption(schema),
  });
  // Without a listener an idle client's socket error would crash the process; the next
  // checkout opens a fresh connection instead.
  pool.on('error', () => undefined);
  return new PoolDatabase({
    pool,
    schema,
    location: { kind: 'postgres', where, ...(hint ? { hint } : {}) },
    namedStatements: true,
    dispose: () => pool.end(),
    listen: (channel, onNotify) => listenOnServer(url, channel, onNotify),
  });
}

/**
 * A connection of its own that LISTENs (a pooled one would be handed to queries). If it
 * drops, notifications stop and whoever listens goes on polling.
 */
async function listenOnServer(
  url: string,
  channel: string,
  onNotify: (payload: string) => void,
): Promise<() => Promise<void>> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  client.on('notification', (message) => {
    if (message.channel === channel) onNotify(message.payload ?? '');
  });
  await client.connect();
  await client.query(`LISTEN ${channel}`);
  return async () => {
    await client.end().catch(() => undefined);
  };
}

/** One pool per PGlite instance: PGlite has a single session, so all handles must queue on it. */
interface SharedPglite {
  pool: pg.Pool;
  gate: SessionGate | undefined;
  currentSchema: string | undefined;
  handles: number;
}

interface OpenPgliteOptions {
  /** Close the instance when the last handle closes. */
  owned: boolean;
  /** Shared with the socket clients when the instance is exposed. */
  gate?: SessionGate;
  beforeClose?: () => Promise<void>;
  afterClose?: () => void;
}

const sharedPools = new WeakMap<PGlite, SharedPglite>();

function openPglite(instance: PGlite, schema: string, options: OpenPgliteOptions): Database {
  let shared = sharedPools.get(instance);
  if (!shared) {
    // allowExitOnIdle: an idle in-process client holds no socket, only a timer that would
    // keep a finished script alive for idleTimeoutMillis.
    const pool = new pg.Pool({ ...createPgConfig(instance), max: 1, allowExitOnIdle: true });
    pool.on('error', () => undefined);
    shared = { pool, gate: options.gate, currentSchema: undefined, handles: 0 };
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
    ...(state.gate ? { session: state.gate } : {}),
    // The pool has one client, so tracking the session's search_path here is exact — unless a
    // socket client used the session in between.
    prepare: async (client) => {
      if (state.gate?.takeForeignUse()) state.currentSchema = undefined;
      if (state.currentSchema === schema) return;
      // The schema alone, without `public` (see openUrl).
      await client.query(`SET search_path TO ${quoteIdentifier(schema)}`);
      state.currentSchema = schema;
    },
    listen: async (channel, onNotify) => {
      const unsubscribe = await instance.listen(channel, onNotify);
      return async () => {
        await unsubscribe();
      };
    },
    dispose: async () => {
      state.handles -= 1;
      if (state.handles > 0) return;
      sharedPools.delete(instance);
      await state.pool.end();
      if (!options.owned) return;
      await options.beforeClose?.();
      await instance.close();
      options.afterClose?.();
    },
  });
}
