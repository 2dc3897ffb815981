import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createDatabase, migrate } from '../../src/db/index.js';
import { approvalsIn, escalate, transferProposal } from '../support/proposals.js';
import { runVeridex, VERIDEX_BIN } from '../support/run-cli.js';

/** Starts `veridex serve --port 0` in `cwd` on the embedded database; resolves once it listens. */
async function startServe(cwd: string) {
  const env = { ...process.env };
  delete env.DATABASE_URL;
  const child = spawn(process.execPath, [VERIDEX_BIN, 'serve', '--port', '0'], {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const match = /Approvals inbox on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
      if (match) resolve(match[1]!);
    });
    void exited.then((code) => reject(new Error(`exited ${code}: ${stderr}`)));
  });
  return { child, url, exited, output: () => ({ stdout, stderr }) };
}

describe('veridex serve', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('serves the inbox on 127.0.0.1 over the embedded database and stops on SIGTERM', {
    timeout: 180_000,
  }, async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'veridex-serve-'));
    dirs.push(cwd);
    const serve = await startServe(cwd);
    try {
      expect(serve.output().stdout).toMatch(/open http:\/\/localhost:\d+/);
      expect((await fetch(`${serve.url}/api/health`)).status).toBe(200);
      const unauthenticated = await fetch(`${serve.url}/api/approvals`);
      expect(unauthenticated.status).toBe(401);
    } finally {
      serve.child.kill('SIGTERM');
    }
    expect(await serve.exited).toBe(0);
    expect(serve.output().stdout).toContain('Stopping.');
  });

  it('started before the app, shares the embedded database: the app opens it through the socket, and the CLI sees what the app wrote', {
    timeout: 300_000,
  }, async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'veridex-serve-'));
    dirs.push(cwd);
    const serve = await startServe(cwd);
    try {
      // The app, as its code would open it (another process from serve's point of view).
      const db = await createDatabase({ dataDir: join(cwd, '.veridex', 'db') });
      try {
        await migrate(db);
        const request = await approvalsIn(db).request(
          transferProposal('th-shared'),
          escalate('human_required'),
        );
        const listed = await runVeridex(['approvals', 'list'], {
          cwd,
          env: { DATABASE_URL: '' },
          timeoutMs: 240_000,
        });
        expect(listed.stdout, listed.stderr).toContain(request.id);
      } finally {
        await db.close();
      }
    } finally {
      serve.child.kill('SIGTERM');
    }
    expect(await serve.exited).toBe(0);
    expect(serve.output().stderr).not.toContain('db_in_use');
  });
});
