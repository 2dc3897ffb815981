import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDatabase, listMigrations, migrate } from '../../src/db/index.js';
import { quoteIdentifier } from '../../src/db/schema-name.js';
import { VeridexError } from '../../src/errors/index.js';
import {
  describeEachDatabase,
  openBackend,
  postgresUrl,
  uniqueSchema,
} from '../support/databases.js';

describeEachDatabase('Database', ({ backend, db, open }) => {
  it('runs parameterised queries and returns pg-shaped rows', async () => {
    const { rows } = await db().query<{ n: string; t: string }>(
      'SELECT $1::int8 AS n, $2::text AS t',
      ['42', 'x'],
    );
    expect(rows).toEqual([{ n: '42', t: 'x' }]);
  });

  it('prepares a statement given prepareAs once per server connection; PGlite runs it unnamed', async () => {
    const name = `probe_${backend}_${Date.now()}`;
    const probe = 'SELECT $1::int AS n';
    for (let call = 0; call < 3; call++) {
      expect((await db().query(probe, [call], { prepareAs: name })).rows).toEqual([{ n: call }]);
    }
    // One connection: run it twice (the second run reuses the statement), then look.
    const prepared = await db().transaction(async (tx) => {
      await tx.query(probe, [1], { prepareAs: name });
      expect((await tx.query(probe, [2], { prepareAs: name })).rows).toEqual([{ n: 2 }]);
      const { rows } = await tx.query<{ statement: string }>(
        'SELECT statement FROM pg_prepared_statements WHERE name = $1',
        [name],
      );
      return rows.map((row) => row.statement);
    });
    expect(prepared).toEqual(backend === 'postgres' ? [probe] : []);
  });

  it('commits a transaction and rolls back one that throws', async () => {
    await db().query('CREATE TABLE things (id int PRIMARY KEY)');
    await db().transaction(async (tx) => {
      await tx.query('INSERT INTO things VALUES (1)');
    });
    await expect(
      db().transaction(async (tx) => {
        await tx.query('INSERT INTO things VALUES (2)');
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const { rows } = await db().query<{ id: number }>('SELECT id FROM things ORDER BY id');
    expect(rows.map((row) => row.id)).toEqual([1]);
  });

  it('reports SQL errors as db_query_failed with the SQLSTATE', async () => {
    await db().query('CREATE TABLE uniq (id int PRIMARY KEY)');
    await db().query('INSERT INTO uniq VALUES (1)');
    const error = await db()
      .query('INSERT INTO uniq VALUES (1)')
      .catch((caught: unknown) => caught);
    expect(VeridexError.is(error, 'db_query_failed')).toBe(true);
    expect((error as VeridexError).details.sqlState).toBe('23505');
  });

  it('keeps tables of different schemas apart', async () => {
    const otherSchema = uniqueSchema();
    const other = await openBackend(backend, otherSchema);
    try {
      await migrate(other);
      await db().query('CREATE TABLE private_table (x int)');
      await expect(other.query('SELECT * FROM private_table')).rejects.toMatchObject({
        code: 'db_query_failed',
      });
      const { rows } = await other.query<{ schema: string }>('SELECT current_schema() AS schema');
      expect(rows[0]?.schema).toBe(otherSchema);
    } finally {
      await other.query(`DROP SCHEMA "${otherSchema}" CASCADE`);
      await other.close();
    }
  });

  it('migrates every migration once; a second run applies nothing', async () => {
    const { rows } = await db().query<{ name: string }>(
      'SELECT name FROM veridex_migrations ORDER BY version',
    );
    expect(rows.map((row) => row.name)).toEqual(
      listMigrations().map((migration) => migration.name),
    );
    const again = await open();
    expect(await migrate(again)).toEqual({ applied: [] });
  });

  it('refuses to run when an applied migration was edited', async () => {
    await db().query("UPDATE veridex_migrations SET checksum = 'edited' WHERE version = 1");
    const again = await open();
    const error = await migrate(again).catch((caught: unknown) => caught);
    expect(VeridexError.is(error, 'migration_mismatch')).toBe(true);
    expect((error as Error).message).toContain('append-only');
  });

  it('quotes any schema name PostgreSQL holds: a hyphen (PostgresSaver accepts custom-schema), a space, upper case, a quote, a backslash — each lands in exactly that schema', async () => {
    const suffix = uniqueSchema().slice(-8);
    for (const name of ['custom-schema', 'Two Words', 'x"; DROP TABLE y; --', 'back\\slash']) {
      const schema = `${name} ${suffix}`;
      const handle = await openBackend(backend, schema);
      try {
        await migrate(handle);
        await handle.query('SELECT count(*) FROM veridex_audit_events');
        const { rows } = await handle.query<{ schema: string }>(
          `SELECT table_schema AS schema FROM information_schema.tables WHERE table_name = 'veridex_audit_events'`,
        );
        expect(rows.map((row) => row.schema)).toContain(schema);
      } finally {
        await handle.query(`DROP SCHEMA ${quoteIdentifier(schema)} CASCADE`);
        await handle.close();
      }
    }
  });

  it('serialises concurrent migrations of a fresh schema', async () => {
    const schema = uniqueSchema();
    const handles = await Promise.all([1, 2, 3].map(() => openBackend(backend, schema)));
    try {
      const results = await Promise.all(handles.map((handle) => migrate(handle)));
      const appliedCounts = results.map((result) => result.applied.length).sort();
      expect(appliedCounts).toEqual([0, 0, listMigrations().length]);
    } finally {
      await handles[0]!.query(`DROP SCHEMA "${schema}" CASCADE`);
      for (const handle of handles) await handle.close();
    }
  });
});

describe('createDatabase', () => {
  it('refuses a schema name PostgreSQL cannot hold (empty, over 63 bytes, NUL, pg_*)', async () => {
    for (const schema of ['', 'x'.repeat(64), 'é'.repeat(32), 'a\u0000b', 'pg_mine']) {
      const error = await createDatabase({ dataDir: 'memory://', schema }).catch(
        (caught: unknown) => caught,
      );
      expect(VeridexError.is(error, 'config_invalid'), JSON.stringify(schema)).toBe(true);
    }
  });

  it('reports an unreachable server as db_unavailable naming the host, never the password', async () => {
    const db = await createDatabase({ url: 'postgres://app:s3cret-pass@127.0.0.1:1/nowhere' });
    try {
      const error = await db.query('SELECT 1').catch((caught: unknown) => caught);
      expect(VeridexError.is(error, 'db_unavailable')).toBe(true);
      expect((error as Error).message).toContain('127.0.0.1:1');
      expect((error as Error).message).toContain('DATABASE_URL');
      expect((error as Error).message).not.toContain('s3cret-pass');
    } finally {
      await db.close();
    }
  });

  it('persists a file-backed PGlite database across reopen', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'veridex-db-'));
    try {
      const first = await createDatabase({ dataDir: join(dir, 'db') });
      await migrate(first);
      await first.query('CREATE TABLE kept (v text)');
      await first.query("INSERT INTO kept VALUES ('still here')");
      await first.close();
      const second = await createDatabase({ dataDir: join(dir, 'db') });
      const { rows } = await second.query<{ v: string }>('SELECT v FROM kept');
      expect(rows).toEqual([{ v: 'still here' }]);
      expect(await migrate(second)).toEqual({ applied: [] });
      await second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.runIf(postgresUrl)('Database on PostgreSQL URLs', () => {
  it('takes the schema from a ?schema= parameter of the URL', async () => {
    const schema = uniqueSchema();
    const url = new URL(postgresUrl!);
    url.searchParams.set('schema', schema);
    const db = await createDatabase({ url: url.toString() });
    try {
      await migrate(db);
      const { rows } = await db.query<{ schema: string }>('SELECT current_schema() AS schema');
      expect(db.schema).toBe(schema);
      expect(rows[0]?.schema).toBe(schema);
      await db.query(`DROP SCHEMA "${schema}" CASCADE`);
    } finally {
      await db.close();
    }
  });
});

describe.runIf(postgresUrl)('Database on PostgreSQL when the connection dies', () => {
  it('fails the running query with db_unavailable and reconnects on the next one', async () => {
    const db = await createDatabase({ url: postgresUrl!, maxConnections: 1 });
    try {
      const { rows } = await db.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      const killer = await createDatabase({ url: postgresUrl!, maxConnections: 1 });
      const pending = db.query('SELECT pg_sleep(5)').catch((caught: unknown) => caught);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await killer.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
      await killer.close();
      const error = await pending;
      expect(VeridexError.is(error, 'db_unavailable')).toBe(true);
      const after = await db.query<{ one: number }>('SELECT 1 AS one');
      expect(after.rows[0]?.one).toBe(1);
    } finally {
      await db.close();
    }
  });
});
