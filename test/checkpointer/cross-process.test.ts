import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { describeEachDatabase, postgresUrl } from '../support/databases.js';

// Two real processes, each starting tsx and opening a database: tens of seconds on a loaded
// 2-core machine. The limit only stops a hung test.
const PROCESS_TEST_MS = 300_000;
const root = fileURLToPath(new URL('../..', import.meta.url));
const script = fileURLToPath(new URL('./fixtures/approval-process.ts', import.meta.url));

interface RunOutput {
  pid: number;
  interrupts: unknown[];
  messages: string[];
}

/** Runs the approval graph in a child process and returns what it printed. */
function runChild(args: string[]): Promise<RunOutput> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`child exited with ${code}: ${stderr}`));
      else resolve(JSON.parse(stdout.trim().split('\n').at(-1)!) as RunOutput);
    });
  });
}

async function suspendThenResume(url: string, schema: string): Promise<void> {
  const first = await runChild(['start', url, schema, 'invoice-42']);
  expect(first.interrupts).toEqual([{ question: 'Pay 12.50 EUR?', amount: 1250 }]);
  const second = await runChild(['resume', url, schema, 'invoice-42', 'approved by ada']);
  expect(second.pid).not.toBe(first.pid);
  expect(second.interrupts).toEqual([]);
  expect(second.messages.slice(1)).toEqual([
    'I will pay invoice 42.',
    'approver said: approved by ada',
    'done after 3 messages',
  ]);
}

describe('PostgresCheckpointer across processes [pglite]', () => {
  it(
    'suspends a graph in one process and resumes it in another on one data directory',
    async () => {
      // PGlite is single-process: the two processes open the directory one after the other.
      const dir = mkdtempSync(join(tmpdir(), 'veridex-checkpointer-'));
      try {
        await suspendThenResume(`file://${join(dir, 'db')}`, 'public');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    PROCESS_TEST_MS,
  );
});

describeEachDatabase(
  'PostgresCheckpointer across processes',
  ({ db }) => {
    it(
      'suspends a graph in one process and resumes it in another on the same server',
      async () => {
        await suspendThenResume(postgresUrl!, db().schema);
      },
      PROCESS_TEST_MS,
    );
  },
  { backends: ['postgres'] },
);
