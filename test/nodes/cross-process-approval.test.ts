import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { writeKeyPair } from '../../src/audit/index.js';
import { createDatabase, migrate } from '../../src/db/index.js';
import { PostgresApproverDirectory } from '../../src/identity/index.js';
import { postgresUrl, withSchemaUrl } from '../support/databases.js';
import { runVeridex } from '../support/run-cli.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const fixture = fileURLToPath(new URL('./fixtures/approval-agent.ts', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/tsx/dist/cli.mjs', import.meta.url));

function runFixture(args: string[], env: NodeJS.ProcessEnv): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [tsx, fixture, ...args], {
      cwd: root,
      env: { ...process.env, ...env },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`fixture ${args[0]} exited ${code}: ${err}`));
      resolve(JSON.parse(out.trim().split('\n').at(-1)!));
    });
  });
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/**
 * Suspend in one process, decide with the `veridex` CLI in others — each decision signed with
 * an approver's key file — and resume in a last one.
 */
async function scenario(
  env: NodeJS.ProcessEnv,
  cli: { cwd?: string; args: string[]; env?: NodeJS.ProcessEnv },
) {
  const options = { ...(cli.cwd ? { cwd: cli.cwd } : {}), ...(cli.env ? { env: cli.env } : {}) };
  const keys = mkdtempSync(join(tmpdir(), 'veridex-keys-'));
  dirs.push(keys);
  // Approver key files and the directory (the CLI's own commands are tested in approvals-cli);
  // the agent's identity holds a key too.
  const db = await createDatabase(
    env.FIXTURE_DATABASE_URL
      ? { url: env.FIXTURE_DATABASE_URL }
      : { dataDir: env.FIXTURE_PGLITE_DIR! },
  );
  try {
    await migrate(db);
    const directory = new PostgresApproverDirectory(db);
    for (const [name, id] of [
      ['alice', 'alice@corp.example'],
      ['bob', 'bob@corp.example'],
      ['bot', 'Payout-Bot'],
    ] as const) {
      const files = writeKeyPair(keys, undefined, name);
      await directory.add({ id, publicKeys: [files.publicKeyPath] });
    }
  } finally {
    await db.close();
  }
  const started = await runFixture(['start'], env);
  expect(started.status).toBe('suspended');
  const approvalId = String(started.approvalId);
  const listed = await runVeridex(['approvals', 'list', ...cli.args], options);
  expect(listed.stdout, listed.stderr).toContain(approvalId);
  const approve = (...rest: string[]) =>
    runVeridex(['approvals', 'approve', approvalId, ...rest, ...cli.args], options);
  // The agent's key: `Payout-Bot` is the proposer `payout-bot`, whatever the spelling.
  const byProposer = await approve('--key', join(keys, 'bot.key'));
  expect(byProposer.code).toBe(1);
  expect(byProposer.stderr).toContain('proposer_cannot_approve');
  // A bare name is not a decision: a usage error without --unverified, refused with it.
  expect((await approve('--as', 'alice@corp.example')).code).toBe(2);
  const unsigned = await approve('--unverified', '--as', 'alice@corp.example');
  expect(unsigned.code).toBe(1);
  expect(unsigned.stderr).toContain('decision_unsigned');
  const alice = await approve('--key', join(keys, 'alice.key'));
  expect(alice.stdout).toContain('pending (1 of 2 approvals)');
  expect(alice.stdout).toContain('signed by alice@corp.example');
  const again = await approve('--key', join(keys, 'alice.key'));
  expect(again.stderr).toContain('approver_duplicate');
  const halfway = await runFixture(['resume', String(started.threadId)], env);
  expect(halfway).toMatchObject({ status: 'suspended', transfers: 0 });
  const bob = await approve('--key', join(keys, 'bob.key'));
  expect(bob.stdout).toContain('approved');
  const done = await runFixture(['resume', String(started.threadId)], env);
  expect(done).toMatchObject({ status: 'completed', transfers: 1, output: 'Paid.' });
}

describe('approvals across processes', () => {
  it('suspends in one process, is decided in others, and resumes in another (PGlite on disk)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'veridex-xproc-'));
    dirs.push(dir);
    await scenario(
      {
        FIXTURE_PGLITE_DIR: join(dir, '.veridex', 'db'),
        FIXTURE_DATABASE_URL: '',
        DATABASE_URL: '',
      },
      { cwd: dir, args: [], env: { DATABASE_URL: '' } },
    );
  }, 600_000);

  it.runIf(postgresUrl)(
    'does the same against one PostgreSQL',
    async () => {
      await withSchemaUrl((url) =>
        scenario({ FIXTURE_DATABASE_URL: url }, { args: ['--database-url', url] }),
      );
    },
    600_000,
  );
});
