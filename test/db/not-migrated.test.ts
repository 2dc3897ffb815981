import { randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresApprovalStore } from '../../src/approvals/postgres-approval-store.js';
import { AuditLog } from '../../src/audit/audit-log.js';
import { PostgresAuditStore } from '../../src/audit/postgres-audit-store.js';
import { PostgresTreeHeadStore } from '../../src/audit/postgres-tree-head-store.js';
import { SecretFingerprintStore } from '../../src/audit/secret-fingerprint-store.js';
import { PostgresCheckpointer } from '../../src/checkpointer/postgres-checkpointer.js';
import { createDatabase, type Database, migrate } from '../../src/db/index.js';
import { VeridexError } from '../../src/errors/index.js';
import { loadDirectorySeal } from '../../src/identity/index.js';
import { PostgresApproverDirectory } from '../../src/identity/postgres-approver-directory.js';
import { PostgresUsageStore } from '../../src/policy/usage-store.js';
import { SessionStore } from '../../src/server/session-store.js';
import { PostgresIdempotencyStore } from '../../src/tools/postgres-idempotency-store.js';
import { PostgresPinStore } from '../../src/tools/postgres-pin-store.js';
import { PostgresCeilingStore } from '../../src/treasury/postgres-ceiling-store.js';
import { type Backend, postgresUrl } from '../support/databases.js';

// The attack (issue 29): `public` holds a migrated Veridex, and a handle is opened on a schema
// nobody migrated (`?schema=fresh`, a typo, a new tenant). Before the fix every statement fell
// through `search_path` to `public`: audit events, approvals and sessions landed in a schema
// nobody reads for this tenant, silently.

/** One store operation on an unmigrated handle, named after the store it exercises. */
const storeOperations: Array<[string, (db: Database) => Promise<unknown>]> = [
  [
    'audit log',
    (db) =>
      new AuditLog({ store: new PostgresAuditStore(db), secretFingerprints: false }).append({
        threadId: 't1',
        type: 'run_started',
        payload: { prompt: 'hi' },
      }),
  ],
  ['audit threads', (db) => new PostgresAuditStore(db).threads()],
  ['approvals', (db) => new PostgresApprovalStore(db).listPending()],
  [
    'idempotency',
    (db) =>
      new PostgresIdempotencyStore(db).reserve('k', { owner: 'o', toolName: 't', leaseMs: 60_000 }),
  ],
  ['ceilings', (db) => new PostgresCeilingStore(db).get('k')],
  ['approver directory', (db) => new PostgresApproverDirectory(db).list()],
  ['tree heads', (db) => new PostgresTreeHeadStore(db).globalHeads()],
  [
    'sessions',
    (db) => new SessionStore(db, { seal: loadDirectorySeal() }).create('alice', 'key-1', 'ed25519'),
  ],
  [
    'usage',
    (db) =>
      new PostgresUsageStore(db).consume({
        scope: 'fuel:thread:t1',
        proposalHash: 'h',
        cost: 1,
        limit: 10,
        now: new Date(),
      }),
  ],
  ['tool pins', (db) => new PostgresPinStore(db).list()],
  ['secret fingerprints', (db) => SecretFingerprintStore.for(db).keys()],
];

interface Victim {
  /** A handle on `public`, migrated. */
  publicDb: Database;
  /** Opens a handle on `schema`, never migrated. */
  open(schema: string): Promise<Database>;
  /** The PostgreSQL URL of the victim database (PostgreSQL only). */
  url?: string;
  close(): Promise<void>;
}

/** A database of its own whose `public` schema is migrated, so a fall-through would land there. */
async function openVictim(backend: Backend): Promise<Victim> {
  if (backend === 'pglite') {
    const pglite = await PGlite.create();
    const publicDb = await createDatabase({ pglite });
    await migrate(publicDb);
    return {
      publicDb,
      open: (schema) => createDatabase({ pglite, schema }),
      close: async () => {
        await publicDb.close();
        await pglite.close();
      },
    };
  }
  const admin = await createDatabase({ url: postgresUrl! });
  const name = `veridex_nm_${randomBytes(5).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(postgresUrl!);
  url.pathname = `/${name}`;
  const publicDb = await createDatabase({ url: url.toString(), maxConnections: 2 });
  await migrate(publicDb);
  return {
    publicDb,
    url: url.toString(),
    open: (schema) => createDatabase({ url: url.toString(), schema, maxConnections: 2 }),
    close: async () => {
      await publicDb.close();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.close();
    },
  };
}

/** Row counts of every Veridex table in `public`, and the list of such tables. */
async function publicFootprint(db: Database): Promise<Record<string, number>> {
  const { rows } = await db.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables
      WHERE table_schema = 'public' AND table_name LIKE 'veridex\\_%' ORDER BY table_name`,
  );
  const counts: Record<string, number> = {};
  for (const { table_name } of rows) {
    const result = await db.query<{ n: string }>(
      `SELECT count(*) AS n FROM public."${table_name}"`,
    );
    counts[table_name] = Number(result.rows[0]!.n);
  }
  return counts;
}

async function refusal(run: () => Promise<unknown>): Promise<VeridexError> {
  const error = await run().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!VeridexError.is(error)) throw new Error(`expected a VeridexError, got ${String(error)}`);
  return error;
}

for (const backend of ['pglite', 'postgres'] as const) {
  describe.skipIf(backend === 'postgres' && !postgresUrl)(
    `an unmigrated schema [${backend}]`,
    () => {
      let victim: Victim;
      let before: Record<string, number>;

      beforeAll(async () => {
        victim = await openVictim(backend);
        before = await publicFootprint(victim.publicDb);
      }, 120_000);

      afterAll(async () => {
        await victim?.close();
      });

      it.each(storeOperations)(
        'refuses the %s with db_not_migrated, writing nothing to public',
        async (_, operation) => {
          const db = await victim.open(`fresh_${randomBytes(4).toString('hex')}`);
          try {
            const error = await refusal(() => operation(db));
            expect(error.code).toBe('db_not_migrated');
            expect(error.message).toContain('npx veridex migrate');
            expect(error.message).toContain('await migrate(db)');
            expect(error.message).toContain(db.schema);
          } finally {
            await db.close();
          }
          expect(await publicFootprint(victim.publicDb)).toEqual(before);
        },
      );

      it('resolves no Veridex table of public from an unmigrated schema, by any name', async () => {
        const db = await victim.open(`fresh_${randomBytes(4).toString('hex')}`);
        try {
          const tables = Object.keys(before);
          expect(tables.length).toBeGreaterThan(10);
          for (const table of tables) {
            const error = await refusal(() => db.query(`SELECT count(*) FROM ${table}`));
            expect(error.code, table).toBe('db_not_migrated');
          }
        } finally {
          await db.close();
        }
      });

      it('refuses a schema migrated only partly, naming what is missing', async () => {
        const db = await victim.open(`partial_${randomBytes(4).toString('hex')}`);
        try {
          await migrate(db);
          await db.query(
            'DELETE FROM veridex_migrations WHERE version = (SELECT max(version) FROM veridex_migrations)',
          );
          await db.query('DROP TABLE veridex_inbox_sessions CASCADE');
          const error = await refusal(() =>
            new SessionStore(db, { seal: loadDirectorySeal() }).find('token'),
          );
          expect(error.code).toBe('db_not_migrated');
          expect(error.message).toMatch(/missing migration/);
        } finally {
          await db.query(`DROP SCHEMA IF EXISTS "${db.schema}" CASCADE`);
          await db.close();
        }
      });

      it('lets the checkpointer migrate its own schema (as documented), never public', async () => {
        const db = await victim.open(`fresh_${randomBytes(4).toString('hex')}`);
        try {
          const saver = new PostgresCheckpointer({ db });
          await saver.setup();
          const { rows } = await db.query<{ n: string }>(
            `SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'veridex_checkpoints'`,
            [db.schema],
          );
          expect(Number(rows[0]!.n)).toBe(1);
        } finally {
          await db.query(`DROP SCHEMA IF EXISTS "${db.schema}" CASCADE`);
          await db.close();
        }
        expect(await publicFootprint(victim.publicDb)).toEqual(before);
      });

      // A pool of our own counts what goes over the wire (PostgreSQL only: PGlite has no pool to pass).
      if (backend === 'postgres')
        it('adds no statement to a store call on a migrated schema', async () => {
          const schema = `counted_${randomBytes(4).toString('hex')}`;
          const setup = await victim.open(schema);
          await migrate(setup);
          const url = new URL(String(victim.url));
          const pool = new pg.Pool({
            connectionString: url.toString(),
            max: 1,
            options: `-c search_path="${schema}"`,
          });
          let statements = 0;
          const query = pool.query.bind(pool);
          pool.query = ((...args: Parameters<typeof query>) => {
            statements++;
            return query(...args);
          }) as typeof pool.query;
          const db = await createDatabase({ pool, schema });
          try {
            const store = new PostgresApprovalStore(db);
            for (let i = 0; i < 20; i++) await store.listPending();
            // One statement per call: the migration check runs only after a statement failed.
            expect(statements).toBe(20);
            await db.query(`DROP SCHEMA "${schema}" CASCADE`);
            statements = 0;
            const error = await refusal(() => store.listPending());
            expect(error.code).toBe('db_not_migrated');
            expect(statements).toBe(2); // the failed statement, then the one look at pg_tables
          } finally {
            await db.close();
            await pool.end();
            await setup.close();
          }
        });

      it('works once migrated, and a store error on a migrated schema stays db_query_failed', async () => {
        const db = await victim.open(`fresh_${randomBytes(4).toString('hex')}`);
        try {
          await migrate(db);
          await new PostgresApprovalStore(db).listPending();
          const error = await refusal(() => db.query('SELECT * FROM veridex_no_such_table'));
          expect(error.code).toBe('db_query_failed');
        } finally {
          await db.query(`DROP SCHEMA IF EXISTS "${db.schema}" CASCADE`);
          await db.close();
        }
      });
    },
  );
}
