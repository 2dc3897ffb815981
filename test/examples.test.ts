import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const tsx = fileURLToPath(new URL('../node_modules/tsx/dist/cli.mjs', import.meta.url));
const examples = readdirSync(new URL('../examples/', import.meta.url)).filter((file) =>
  file.endsWith('.ts'),
);

function runExample(file: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [tsx, `examples/${file}`], {
      cwd: root,
      // Examples must run with no keys and no server: that is the promise of the quick start.
      env: { ...process.env, OPENAI_API_KEY: '', DATABASE_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('examples/', () => {
  it.each(examples)(
    '%s runs to completion with no keys and no server',
    async (file) => {
      const { code, output } = await runExample(file);
      expect(code, output).toBe(0);
    },
    120_000,
  );
});
