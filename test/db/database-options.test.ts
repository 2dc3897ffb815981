import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type CreateDatabaseOptions,
  createDatabase,
  DEFAULT_PGLITE_DIR,
  resolveDatabaseTarget,
} from '../../src/db/index.js';
import { VeridexError } from '../../src/errors/index.js';
import { postgresUrl } from '../support/databases.js';

async function configError(options: unknown): Promise<VeridexError> {
  const error = await createDatabase(options as CreateDatabaseOptions).catch((caught) => caught);
  expect(VeridexError.is(error, 'config_invalid'), String(error)).toBe(true);
  return error as VeridexError;
}

describe('createDatabase options are checked at run time', () => {
  it('rejects options from other libraries and typos, naming what was meant', async () => {
    expect((await configError({ connectionString: 'postgres://x@h/db' })).message).toContain(
      'did you mean "url"',
    );
    expect((await configError({ dataDri: '/tmp/x' })).message).toContain('did you mean "dataDir"');
    expect((await configError({ shema: 'x' })).message).toContain('did you mean "schema"');
    expect((await configError({ nonsenseOption: 1 })).message).toContain('Known options');
  });

  it('rejects url: undefined and url: "" instead of silently opening PGlite', async () => {
    const undefinedUrl = await configError({ url: undefined });
    expect(undefinedUrl.message).toContain('url: undefined');
    expect(undefinedUrl.message).toContain('environment variable');
    expect((await configError({ url: '' })).message).toContain('non-empty string');
    expect((await configError({ url: '   ' })).message).toContain('non-empty string');
    expect((await configError({ dataDir: '' })).message).toContain('non-empty string');
  });

  it('rejects two places at once and settings of the wrong type', async () => {
    await configError({ url: 'postgres://x@h/db', dataDir: '/tmp/x' });
    await configError({ url: 'postgres://x@h/db', extensions: {} });
    await configError({ pool: 'not a pool' });
    await configError({ pglite: {} });
    await configError({ maxConnections: 0 });
    await configError({ schema: 5 });
    await configError('postgres://x@h/db');
  });
});

describe('one rule for where the database is: options, else DATABASE_URL, else PGlite', () => {
  const saved = process.env.DATABASE_URL;
  afterEach(() => {
    if (saved === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = saved;
  });

  it('resolves the same way createDatabase and the CLI open it', () => {
    const env = { DATABASE_URL: 'postgres://app@db.internal:5432/app' };
    expect(resolveDatabaseTarget({}, env)).toEqual({
      kind: 'url',
      url: env.DATABASE_URL,
      from: 'DATABASE_URL',
    });
    expect(resolveDatabaseTarget({ schema: 's' }, env)).toMatchObject({ kind: 'url' });
    expect(resolveDatabaseTarget({}, { DATABASE_URL: '  ' })).toEqual({
      kind: 'dataDir',
      dataDir: DEFAULT_PGLITE_DIR,
    });
    expect(resolveDatabaseTarget({ dataDir: 'memory://' }, env)).toEqual({
      kind: 'dataDir',
      dataDir: 'memory://',
    });
  });

  it('createDatabase() with no location connects to DATABASE_URL', async () => {
    process.env.DATABASE_URL = 'postgres://app:hidden@127.0.0.1:1/from_env';
    const db = await createDatabase();
    try {
      expect(db.kind).toBe('postgres');
      const error = await db.query('SELECT 1').catch((caught: unknown) => caught);
      expect(VeridexError.is(error, 'db_unavailable')).toBe(true);
      expect((error as Error).message).toContain('127.0.0.1:1/from_env');
    } finally {
      await db.close();
    }
  });
});

describe.runIf(postgresUrl)('connection failures on a real server are db_unavailable', () => {
  it('reports a database that does not exist as db_unavailable', async () => {
    const url = new URL(postgresUrl!);
    url.pathname = '/no_such_db_veridex';
    const db = await createDatabase({ url: url.toString() });
    try {
      const error = await db.query('SELECT 1').catch((caught: unknown) => caught);
      expect(VeridexError.is(error, 'db_unavailable'), String(error)).toBe(true);
      expect((error as Error).message).toContain('no_such_db_veridex');
    } finally {
      await db.close();
    }
  });

  it('says how to fix a URL without a user name', async () => {
    const url = new URL(postgresUrl!);
    url.username = '';
    url.password = '';
    const savedUser = { PGUSER: process.env.PGUSER, USER: process.env.USER };
    delete process.env.PGUSER;
    process.env.USER = 'no_such_role_veridex';
    const db = await createDatabase({ url: url.toString() });
    try {
      const error = await db.query('SELECT 1').catch((caught: unknown) => caught);
      expect(VeridexError.is(error, 'db_unavailable'), String(error)).toBe(true);
      expect((error as Error).message).toContain('The URL names no user');
      expect((error as Error).message).toContain('postgres://postgres@');
    } finally {
      await db.close();
      for (const [name, value] of Object.entries(savedUser)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});

const tsx = fileURLToPath(new URL('../../node_modules/tsx/dist/cli.mjs', import.meta.url));
const child = fileURLToPath(new URL('./fixtures/idle-exit-child.ts', import.meta.url));

function runChild(args: string[]): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const process_ = spawn(process.execPath, [tsx, child, ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    process_.stdout.on('data', (chunk) => (stdout += chunk));
    process_.on('error', reject);
    process_.on('close', (code) => resolve({ code, stdout }));
  });
}

describe('an unclosed PGlite does not keep a finished script alive', () => {
  it.each(['checkpointer', 'database'])(
    'a %s on file:// leaves nothing holding the event loop, and the process exits',
    async (mode) => {
      const dir = mkdtempSync(join(tmpdir(), 'veridex-idle-'));
      try {
        // The process exiting on its own is the real check; the report says what held it.
        const { code, stdout } = await runChild([mode, join(dir, 'db')]);
        expect(code).toBe(0);
        expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toEqual({ holding: [] });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    // Generous: two PGlite start-ups on a loaded machine. Without the fix the child lives on
    // for minutes, so this limit still catches it.
    300_000,
  );
});
