import { randomBytes } from 'node:crypto';
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import { afterAll, afterEach, beforeEach, describe, it } from 'vitest';
import { createDatabase, type Database, migrate } from '../../src/db/index.js';

/** The backends every storage suite runs against. */
export type Backend = 'pglite' | 'postgres';

/** What a storage suite gets: a migrated database in a schema of its own, fresh for each test. */
export interface DatabaseContext {
  readonly backend: Backend;
  /** This test's database handle (migrated). */
  db(): Database;
  /** Another handle on the same schema; on Postgres a separate pool, i.e. real second connections. */
  open(): Promise<Database>;
}

export const postgresUrl = process.env.DATABASE_URL;
const inCi = process.env.CI === 'true' || process.env.CI === '1';

let sharedPglite: Promise<PGlite> | undefined;
let sharedExtensions: PGliteOptions['extensions'] | undefined;

/**
 * One PGlite per test file (a fresh one costs 1–4 s and ~700 MB); tests are isolated by schema.
 * Vitest gives each file its own module instance, so this is per file.
 */
export function sharedPgliteInstance(extensions?: PGliteOptions['extensions']): Promise<PGlite> {
  if (sharedPglite && extensions !== sharedExtensions) {
    throw new Error('All suites of one test file must ask for the same PGlite extensions.');
  }
  sharedExtensions = extensions;
  sharedPglite ??= PGlite.create(extensions ? { extensions } : {});
  return sharedPglite;
}

afterAll(async () => {
  if (sharedPglite) {
    const instance = await sharedPglite;
    sharedPglite = undefined;
    await instance.close();
  }
});

/** A schema name no other test (in this or another process) will pick. */
export function uniqueSchema(): string {
  return `t_${randomBytes(6).toString('hex')}`;
}

/**
 * Runs `run` with a `DATABASE_URL`-style URL of the test PostgreSQL pointing at a schema of its
 * own (for child processes and the CLI, which open the database themselves), and drops the
 * schema afterwards.
 */
export async function withSchemaUrl(run: (url: string) => Promise<void>): Promise<void> {
  const url = new URL(postgresUrl!);
  url.searchParams.set('schema', uniqueSchema());
  try {
    await run(url.toString());
  } finally {
    const db = await createDatabase({ url: url.toString() });
    await db.query(`DROP SCHEMA IF EXISTS "${db.schema}" CASCADE`);
    await db.close();
  }
}

/** Opens a handle on `schema` for `backend` (without migrating). */
export async function openBackend(
  backend: Backend,
  schema: string,
  extensions?: PGliteOptions['extensions'],
): Promise<Database> {
  if (backend === 'postgres')
    return createDatabase({ url: postgresUrl!, schema, maxConnections: 4 });
  return createDatabase({ pglite: await sharedPgliteInstance(extensions), schema });
}

/**
 * Runs `suite` once per backend: PGlite always, PostgreSQL when `DATABASE_URL` is set.
 * Without `DATABASE_URL` the Postgres half is skipped visibly on a laptop and fails in CI.
 */
export function describeEachDatabase(
  name: string,
  suite: (context: DatabaseContext) => void,
  options: { extensions?: PGliteOptions['extensions']; backends?: Backend[] } = {},
): void {
  for (const backend of options.backends ?? (['pglite', 'postgres'] as const)) {
    const title = `${name} [${backend}]`;
    if (backend === 'postgres' && !postgresUrl) {
      if (inCi) {
        describe(title, () => {
          it('runs against PostgreSQL (DATABASE_URL must be set in CI)', () => {
            throw new Error(
              'DATABASE_URL is not set: CI must run the database suites on real PostgreSQL.',
            );
          });
        });
      } else {
        describe.skip(`${title} — skipped: set DATABASE_URL to run on PostgreSQL`, () => {
          it('needs DATABASE_URL', () => undefined);
        });
      }
      continue;
    }
    describe(title, () => {
      let schema = '';
      let current: Database | undefined;
      const extra: Database[] = [];
      beforeEach(async () => {
        schema = uniqueSchema();
        current = await openBackend(backend, schema, options.extensions);
        await migrate(current);
      });
      afterEach(async () => {
        for (const handle of extra.splice(0)) await handle.close();
        if (current) {
          await current.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
          await current.close();
          current = undefined;
        }
      });
      suite({
        backend,
        db: () => {
          if (!current) throw new Error('db() is only available inside a test.');
          return current;
        },
        open: async () => {
          const handle = await openBackend(backend, schema, options.extensions);
          extra.push(handle);
          return handle;
        },
      });
    });
  }
}
