import type { PGlite, PGliteOptions } from '@electric-sql/pglite';
import type pg from 'pg';
import { VeridexError } from '../errors/index.js';
import type { ExposeOption } from './pglite-socket.js';

/** Where PGlite keeps its files when nothing is configured. */
export const DEFAULT_PGLITE_DIR = './.veridex/db';

/**
 * Options for {@link createDatabase}. Give at most one of `url`, `pool`, `pglite`, `dataDir`;
 * with none, `DATABASE_URL` is used when set, else PGlite in `./.veridex/db` (the rule the
 * `veridex` command follows too).
 */
export interface CreateDatabaseOptions {
  /** A `postgres://` URL; the handle owns a `pg.Pool` for it. `?schema=name` selects the schema. */
  url?: string;
  /** A pool you own; `close()` leaves it open. Its connections' `search_path` decides the schema. */
  pool?: pg.Pool;
  /** A PGlite instance you own; `close()` leaves it open. Handles over one instance share its single session safely. */
  pglite?: PGlite;
  /**
   * PGlite data directory (`memory://` for in-memory). On disk it is locked for this process
   * (`<dataDir>.lock`): a second process gets `db_in_use`, or goes through the holder's
   * socket when the holder set `expose`.
   */
  dataDir?: string;
  /** PGlite extensions to load, e.g. `{ vector }` from `@electric-sql/pglite-pgvector`. */
  extensions?: PGliteOptions['extensions'];
  /** Schema for the library's tables (created by `migrate()`). Default `public`. */
  schema?: string;
  /** Connections in a URL pool. Default 10. */
  maxConnections?: number;
  /**
   * Lets other processes (the `veridex` command, a second script) use this on-disk PGlite
   * database while this process holds it, through a local socket served with
   * `@electric-sql/pglite-socket` (an optional peer you install). `true` or `{ path }`: a
   * Unix socket readable only by you (default `<dataDir>.socket/`). `{ host: '127.0.0.1',
   * port }`: TCP on loopback — every local user can then connect, PGlite has no passwords.
   * Off by default.
   */
  expose?: ExposeOption;
}

/** Where {@link createDatabase} goes, after the options and `DATABASE_URL` were read. */
export type DatabaseTarget =
  | { kind: 'url'; url: string; from: 'options' | 'DATABASE_URL' }
  | { kind: 'pool'; pool: pg.Pool }
  | { kind: 'pglite'; pglite: PGlite }
  | { kind: 'dataDir'; dataDir: string };

const LOCATION_KEYS = ['url', 'pool', 'pglite', 'dataDir'] as const;
const KNOWN_KEYS = new Set<string>([
  ...LOCATION_KEYS,
  'extensions',
  'schema',
  'maxConnections',
  'expose',
]);
// Names people reach for from other libraries, mapped to ours.
const ALIASES: Record<string, string> = {
  connectionString: 'url',
  connectionUrl: 'url',
  databaseUrl: 'url',
  uri: 'url',
  dir: 'dataDir',
  datadir: 'dataDir',
  path: 'dataDir',
  max: 'maxConnections',
};

/**
 * Checks `createDatabase` options at run time (JavaScript callers and spread objects bypass
 * the types) and decides where to connect. Explicit options win; with no location given,
 * a non-empty `DATABASE_URL` is used, else the default PGlite directory.
 *
 * @throws VeridexError `config_invalid` naming the offending option and what to write instead.
 */
export function resolveDatabaseTarget(
  options: unknown,
  env: NodeJS.ProcessEnv = process.env,
): DatabaseTarget {
  if (options === undefined) options = {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw invalid(`createDatabase() takes an options object; got ${describe(options)}.`);
  }
  const given = options as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    if (KNOWN_KEYS.has(key)) continue;
    const suggestion = ALIASES[key] ?? closestKey(key);
    throw invalid(
      `createDatabase() got an unknown option "${key}"${suggestion ? `; did you mean "${suggestion}"?` : '.'} Known options: ${[...KNOWN_KEYS].join(', ')}.`,
    );
  }
  const locations = LOCATION_KEYS.filter((key) => Object.hasOwn(given, key));
  if (locations.length > 1) {
    throw invalid(
      `createDatabase() got ${locations.join(' and ')}; give one place for the database.`,
    );
  }
  checkSettings(given);
  const [location] = locations;
  if (location === undefined) {
    const fromEnv = env.DATABASE_URL?.trim();
    return fromEnv
      ? { kind: 'url', url: fromEnv, from: 'DATABASE_URL' }
      : { kind: 'dataDir', dataDir: DEFAULT_PGLITE_DIR };
  }
  if (location !== 'dataDir' && given.extensions !== undefined) {
    throw invalid(
      `createDatabase() got extensions with ${location}; extensions load only into a PGlite that createDatabase creates (dataDir).`,
    );
  }
  if (location !== 'dataDir' && given.expose !== undefined) {
    throw invalid(
      `createDatabase() got expose with ${location}; only an on-disk PGlite dataDir can be exposed.`,
    );
  }
  const value = given[location];
  switch (location) {
    case 'url':
      return { kind: 'url', url: nonEmptyText('url', value), from: 'options' };
    case 'dataDir':
      return { kind: 'dataDir', dataDir: nonEmptyText('dataDir', value) };
    case 'pool':
      if (!hasMethod(value, 'connect'))
        throw invalid(`pool must be a pg.Pool; got ${describe(value)}.`);
      return { kind: 'pool', pool: value as pg.Pool };
    case 'pglite':
      if (!hasMethod(value, 'execProtocolStream')) {
        throw invalid(`pglite must be a PGlite instance; got ${describe(value)}.`);
      }
      return { kind: 'pglite', pglite: value as PGlite };
  }
}

function checkSettings(given: Record<string, unknown>): void {
  if (given.schema !== undefined && typeof given.schema !== 'string') {
    throw invalid(`schema must be a string; got ${describe(given.schema)}.`);
  }
  const max = given.maxConnections;
  if (max !== undefined && !(Number.isInteger(max) && (max as number) > 0)) {
    throw invalid(`maxConnections must be a positive integer; got ${describe(max)}.`);
  }
  if (
    given.extensions !== undefined &&
    (typeof given.extensions !== 'object' || !given.extensions)
  ) {
    throw invalid(
      `extensions must be an object of PGlite extensions; got ${describe(given.extensions)}.`,
    );
  }
}

function nonEmptyText(name: 'url' | 'dataDir', value: unknown): string {
  if (typeof value === 'string' && value.trim() !== '') return value;
  const fallback =
    'Leave the option out to use DATABASE_URL when it is set, else PGlite in ./.veridex/db.';
  if (value === undefined) {
    throw invalid(
      `createDatabase() got ${name}: undefined — often an environment variable that is not set. Pass a ${name === 'url' ? 'postgres:// URL' : 'directory'}, or: ${fallback}`,
    );
  }
  throw invalid(
    `createDatabase() ${name} must be a non-empty string; got ${describe(value)}. ${fallback}`,
  );
}

function hasMethod(value: unknown, method: string): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Record<string, unknown>)[method] === 'function'
  );
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return value === '' ? 'an empty string' : 'a string';
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`;
}

/** The known option within two edits of `key` (a typo such as `dataDri`), if any. */
function closestKey(key: string): string | undefined {
  if (key.length > 40) return undefined;
  let best: { name: string; distance: number } | undefined;
  for (const name of KNOWN_KEYS) {
    const distance = editDistance(key.toLowerCase(), name.toLowerCase());
    if (distance <= 2 && (!best || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

// Damerau (optimal string alignment) distance, so a swapped pair like "ir"/"ri" is one edit.
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const row = rows[i]!;
      row[j] = Math.min(rows[i - 1]![j]! + 1, row[j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        row[j] = Math.min(row[j]!, rows[i - 2]![j - 2]! + 1);
      }
    }
  }
  return rows[a.length]![b.length]!;
}

function invalid(message: string): VeridexError {
  return new VeridexError('config_invalid', message);
}
