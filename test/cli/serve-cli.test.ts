import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { VERIDEX_BIN } from '../support/run-cli.js';

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
    try {
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (chunk) => {
          stdout += chunk;
          const match = /Approvals inbox on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
          if (match) resolve(match[1]!);
        });
        void exited.then((code) => reject(new Error(`exited ${code}: ${stderr}`)));
      });
      expect(stdout).toMatch(/open http:\/\/localhost:\d+/);
      expect((await fetch(`${url}/api/health`)).status).toBe(200);
      const unauthenticated = await fetch(`${url}/api/approvals`);
      expect(unauthenticated.status).toBe(401);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(stdout).toContain('Stopping.');
  });
});
