import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase, migrate } from '../../src/db/index.js';
import { VeridexError } from '../../src/errors/index.js';
import { approvalsIn } from '../support/proposals.js';
import { runVeridex } from '../support/run-cli.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/tsx/dist/cli.mjs', import.meta.url));
const holderApp = fileURLToPath(new URL('./fixtures/holder-app.ts', import.meta.url));
const openChild = fileURLToPath(new URL('./fixtures/open-child.ts', import.meta.url));
// Process start-ups (tsx, PGlite) take seconds, more on a loaded machine: every wait below is
// on an event (a line printed, an exit), and these limits only stop a hung test.
const PROCESS_TEST_MS = 300_000;

const dirs: string[] = [];
const children: LineChild[] = [];
afterAll(() => {
  // A failed assertion must not leave a holder running.
  for (const child of children) if (child.child.exitCode === null) child.child.kill('SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
function temporaryDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'vx-lock-'));
  dirs.push(dir);
  return dir;
}

/** A child process speaking one JSON object per line on stdout. */
class LineChild {
  readonly child: ChildProcessWithoutNullStreams;
  readonly #lines: string[] = [];
  readonly #waiters: Array<(line: string) => void> = [];
  #stderr = '';
  readonly exited: Promise<number | null>;

  constructor(script: string, args: string[]) {
    this.child = spawn(process.execPath, [tsx, script, ...args], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: '' },
    });
    let buffer = '';
    this.child.stdout.on('data', (chunk) => {
      buffer += chunk;
      for (let end = buffer.indexOf('\n'); end >= 0; end = buffer.indexOf('\n')) {
        const line = buffer.slice(0, end).trim();
        buffer = buffer.slice(end + 1);
        if (!line.startsWith('{')) continue;
        const waiter = this.#waiters.shift();
        if (waiter) waiter(line);
        else this.#lines.push(line);
      }
    });
    this.child.stderr.on('data', (chunk) => (this.#stderr += chunk));
    this.exited = new Promise((resolve) => this.child.on('close', resolve));
    children.push(this);
  }

  /** The next JSON line; rejects if the process exits first. */
  async next(): Promise<Record<string, unknown>> {
    const queued = this.#lines.shift();
    const line =
      queued ??
      (await Promise.race([
        new Promise<string>((resolve) => this.#waiters.push(resolve)),
        this.exited.then((code) => {
          throw new Error(`child exited ${code} before answering: ${this.#stderr}`);
        }),
      ]));
    return JSON.parse(line);
  }

  send(command: string): void {
    this.child.stdin.write(`${command}\n`);
  }
}

async function startHolder(expose: 'none' | 'unix' | 'tcp') {
  const dir = temporaryDir();
  const holder = new LineChild(holderApp, [join(dir, '.veridex', 'db'), join(dir, 'keys'), expose]);
  const started = await holder.next();
  expect(started.ready).toBe('suspended');
  return { dir, holder, approvalId: String(started.approvalId), pid: Number(started.pid) };
}

/** The request as a fresh process sees it once nobody holds the directory. */
async function approvalAfterwards(dir: string, approvalId: string) {
  const db = await createDatabase({ dataDir: join(dir, '.veridex', 'db') });
  try {
    await migrate(db);
    const request = await approvalsIn(db).get(approvalId);
    const { rows } = await db.query<{ count: string }>('SELECT count(*) FROM fixture_transfers');
    return { status: request?.status, transfers: Number(rows[0]!.count) };
  } finally {
    await db.close();
  }
}

describe('a PGlite directory is opened by one process at a time', () => {
  it(
    'the CLI refuses with db_in_use naming the holder while an app has it, and the decision is never lost',
    async () => {
      const { dir, holder, approvalId, pid } = await startHolder('none');
      const approve = await runVeridex(
        ['approvals', 'approve', approvalId, '--key', join(dir, 'keys', 'alice.key')],
        { cwd: dir, env: { DATABASE_URL: '' }, timeoutMs: PROCESS_TEST_MS },
      );
      expect(approve.code).toBe(1);
      expect(approve.stderr).toContain('[db_in_use]');
      expect(approve.stderr).toContain(`pid ${pid}`);
      expect(approve.stderr).toContain('expose: true');
      expect(approve.stdout).not.toContain('approved');
      // The app still sees its request pending: nothing was decided behind its back.
      holder.send('resume');
      expect(await holder.next()).toEqual({ status: 'suspended', transfers: 0 });
      holder.send('close');
      await holder.next();
      expect(await holder.exited).toBe(0);
      // With the app gone the same command works, on the one copy of the data.
      const retry = await runVeridex(
        ['approvals', 'approve', approvalId, '--key', join(dir, 'keys', 'alice.key')],
        { cwd: dir, env: { DATABASE_URL: '' }, timeoutMs: PROCESS_TEST_MS },
      );
      expect(retry.stdout).toContain('approved');
      expect(await approvalAfterwards(dir, approvalId)).toMatchObject({ status: 'approved' });
    },
    PROCESS_TEST_MS,
  );

  it.each(['unix', 'tcp'] as const)(
    'the CLI decides through the socket of an app that exposes its database (%s), and the app acts on it',
    async (expose) => {
      const { dir, holder, approvalId } = await startHolder(expose);
      const cli = { cwd: dir, env: { DATABASE_URL: '' }, timeoutMs: PROCESS_TEST_MS };
      const listed = await runVeridex(['approvals', 'list'], cli);
      expect(listed.stdout, listed.stderr).toContain(approvalId);
      const approve = await runVeridex(
        ['approvals', 'approve', approvalId, '--key', join(dir, 'keys', 'alice.key')],
        cli,
      );
      expect(approve.stdout, approve.stderr).toContain('approved');
      holder.send('resume');
      expect(await holder.next()).toEqual({ status: 'completed', transfers: 1 });
      holder.send('close');
      await holder.next();
      expect(await holder.exited).toBe(0);
      expect(await approvalAfterwards(dir, approvalId)).toEqual({
        status: 'approved',
        transfers: 1,
      });
    },
    PROCESS_TEST_MS,
  );

  it(
    'takes over the lock of a holder that was killed',
    async () => {
      const dir = temporaryDir();
      const dataDir = join(dir, 'db');
      const first = new LineChild(openChild, [dataDir]);
      expect(await first.next()).toMatchObject({ opened: true });
      first.child.kill('SIGKILL');
      await first.exited;
      const second = new LineChild(openChild, [dataDir]);
      expect(await second.next()).toMatchObject({ opened: true });
      second.child.stdin.end();
      expect(await second.exited).toBe(0);
    },
    PROCESS_TEST_MS,
  );

  it(
    'lets exactly one of several processes opening at once have the directory',
    async () => {
      const dataDir = join(temporaryDir(), 'db');
      const openers = [1, 2, 3].map(() => new LineChild(openChild, [dataDir]));
      const answers = await Promise.all(openers.map((child) => child.next()));
      expect(answers.filter((answer) => answer.opened === true)).toHaveLength(1);
      expect(answers.filter((answer) => answer.code === 'db_in_use')).toHaveLength(2);
      for (const child of openers) child.child.stdin.end();
      await Promise.all(openers.map((child) => child.exited));
    },
    PROCESS_TEST_MS,
  );

  it.runIf(process.getuid?.() === 0)(
    "does not trust a lock file planted by another user (it could point at that user's socket)",
    async () => {
      const dataDir = join(temporaryDir(), 'db');
      writeFileSync(
        `${dataDir}.lock`,
        JSON.stringify({
          pid: process.pid,
          host: 'elsewhere',
          since: new Date().toISOString(),
          token: 'planted',
          socket: 'postgres://postgres@127.0.0.1:1/postgres',
        }),
      );
      chownSync(`${dataDir}.lock`, 12345, 12345);
      const error = await createDatabase({ dataDir }).catch((caught: unknown) => caught);
      expect(VeridexError.is(error, 'db_in_use')).toBe(true);
      expect((error as Error).message).toContain('belongs to another user');
    },
  );
});

describe('an exposed PGlite shares its one session safely', () => {
  it("never runs the holder's statements inside a socket client's open transaction", async () => {
    const dataDir = join(temporaryDir(), 'db');
    const holder = await createDatabase({ dataDir, expose: { host: '127.0.0.1' } });
    const lock = JSON.parse((await import('node:fs')).readFileSync(`${dataDir}.lock`, 'utf8')) as {
      socket: string;
    };
    const client = new pg.Client({ connectionString: lock.socket });
    try {
      await holder.query('CREATE TABLE decisions (who text)');
      await client.connect();
      await client.query('BEGIN');
      await client.query("INSERT INTO decisions VALUES ('cli')");
      // The holder's transaction starts while the client's is open, and rolls back.
      const holderWork = holder
        .transaction(async (tx) => {
          await tx.query("INSERT INTO decisions VALUES ('app')");
          throw new Error('app changes its mind');
        })
        .catch((error: Error) => error.message);
      // Give the holder every chance to run first if nothing stopped it.
      await new Promise((resolve) => setImmediate(resolve));
      await client.query('COMMIT');
      expect(await holderWork).toBe('app changes its mind');
      const { rows } = await holder.query<{ who: string }>('SELECT who FROM decisions');
      // Without the session gate the app's ROLLBACK undid the client's insert (and its own
      // BEGIN went into the client's transaction): the CLI's decision was silently lost.
      expect(rows).toEqual([{ who: 'cli' }]);
    } finally {
      await client.end().catch(() => undefined);
      await holder.close();
    }
  }, 120_000);
});
