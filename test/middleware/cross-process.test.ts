import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { ApprovalsInterrupt } from '../../src/governance/index.js';
import { signAs } from '../support/approvers.js';
import { postgresUrl, withSchemaUrl } from '../support/databases.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const fixture = fileURLToPath(new URL('./fixtures/create-agent-process.ts', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/tsx/dist/cli.mjs', import.meta.url));

interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  out?: {
    interrupt: ApprovalsInterrupt | null;
    transfers: number;
    tool: { status: string; content: string } | null;
    output: unknown;
  };
  err: string;
}

function runFixture(args: string[], env: NodeJS.ProcessEnv): Promise<Outcome> {
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
    child.on('close', (code, signal) => {
      const last = out.trim().split('\n').at(-1);
      resolve({ code, signal, err, ...(code === 0 && last ? { out: JSON.parse(last) } : {}) });
    });
  });
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/**
 * Suspend in one process; resume with alice's signed decision in a second, which is killed
 * right after the payment rail recorded the transfer; continue in a third: the transfer is on
 * the rail exactly once, and the third process learns its receipt from the tool's `recover`.
 */
async function scenario(env: NodeJS.ProcessEnv) {
  const thread = `xproc-${process.pid}-${Date.now()}`;
  const started = await runFixture(['start', thread], env);
  expect(started.code, started.err).toBe(0);
  const value = started.out!.interrupt!;
  expect(value.actionRequests[0]).toMatchObject({ name: 'transfer', route: 'human_required' });
  expect(started.out!.transfers).toBe(0);

  const decision = { decisions: [{ type: 'approve', ...signAs(value.approvals[0]!, 'alice') }] };
  const crashed = await runFixture(['resume', thread], {
    ...env,
    FIXTURE_RESUME: JSON.stringify(decision),
    FIXTURE_CRASH_AFTER_EFFECT: '1',
  });
  // tsx relays its child's death by SIGKILL as exit code 137 (128 + 9).
  expect(crashed.signal === 'SIGKILL' || crashed.code === 137, crashed.err).toBe(true);

  const continued = await runFixture(['continue', thread], env);
  expect(continued.code, continued.err).toBe(0);
  expect(continued.out).toMatchObject({
    interrupt: null,
    transfers: 1,
    tool: { status: 'success' },
    output: 'Paid.',
  });
  // Once more, for good measure: nothing left to do, nothing runs again.
  const again = await runFixture(['continue', thread], env);
  expect(again.out?.transfers).toBe(1);
}

describe('createAgent with governanceMiddleware across processes', () => {
  it('executes an approved transfer exactly once when the executing process dies (PGlite on disk)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'veridex-mw-'));
    dirs.push(dir);
    await scenario({ FIXTURE_PGLITE_DIR: join(dir, 'db'), FIXTURE_DATABASE_URL: '' });
  }, 240_000);

  it.runIf(postgresUrl)(
    'does the same against one PostgreSQL',
    async () => {
      await withSchemaUrl((url) => scenario({ FIXTURE_DATABASE_URL: url }));
    },
    240_000,
  );
});
