// IsolatedProcessSandbox with `startup: 'module'` (what runs where esbuild is not installed):
// the child imports the compiled tool module by URL. The library must be JavaScript for that
// (from TypeScript sources every process sandbox needs esbuild), so this test transpiles `src/`
// into a scratch directory inside the repository (its node_modules must be found above it, as
// in an application) and runs real calls there in a plain Node process.
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeIsolated } from '../support/isolation.js';

const repository = fileURLToPath(new URL('../../', import.meta.url));
const source = join(repository, 'src');

const TOOL = `
import { z } from 'zod';
import { tool } from './lib/tools/index.js';
export const shout = tool({
  name: 'shout',
  description: 'Upper-cases a text and notes it in the jail.',
  safetyClass: 'write',
  input: z.object({ text: z.string() }),
  output: z.object({ text: z.string() }),
  sandbox: { module: import.meta.url },
  async execute({ input, fs }) {
    await fs.writeFile('shouted.txt', input.text);
    return { text: input.text.toUpperCase() };
  },
});
`;

const AGENT = `
import { IsolatedProcessSandbox } from './lib/sandbox/index.js';
import { executeTool } from './lib/tools/execute-tool.js';
import { shout } from './tool.js';
const [jail, prewarm] = process.argv.slice(2);
const sandbox = new IsolatedProcessSandbox({
  jailRoot: jail, startup: 'module', prewarm: prewarm === 'prewarm', timeoutMs: 60000,
});
const results = [];
try {
  for (const text of ['one', 'two', 'three']) {
    const result = await executeTool(shout, { text }, { sandbox });
    results.push(result.status === 'success' ? result.output : { code: result.code, message: result.message });
  }
} finally {
  sandbox.close();
}
console.log(JSON.stringify(results));
`;

let scratch: string;
let jail: string;

beforeAll(async () => {
  mkdirSync(join(repository, '.test-output'), { recursive: true });
  scratch = mkdtempSync(join(repository, '.test-output', 'module-startup-'));
  const files: string[] = [];
  const walk = (directory: string) => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const path = join(directory, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) files.push(path);
    }
  };
  walk(source);
  await build({
    entryPoints: files,
    outdir: join(scratch, 'lib'),
    outbase: source,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'silent',
  });
  writeFileSync(join(scratch, 'package.json'), JSON.stringify({ type: 'module' }));
  writeFileSync(join(scratch, 'tool.js'), TOOL);
  writeFileSync(join(scratch, 'agent.js'), AGENT);
  jail = join(scratch, 'jail');
  mkdirSync(jail);
  // A root agent's sandbox user must read the library and the tool, and reach the jail.
  chmodSync(scratch, 0o755);
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function runAgent(mode: 'cold' | 'prewarm'): Promise<unknown[]> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(scratch, 'agent.js'), jail, mode],
    { cwd: scratch, timeout: 170_000, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? 'null') as unknown[];
}

describeIsolated("IsolatedProcessSandbox with startup: 'module'", () => {
  it('runs real calls in a child that imports the compiled tool module', async () => {
    expect(relative(repository, scratch)).toMatch(/^\.test-output\//);
    expect(await runAgent('cold')).toEqual([{ text: 'ONE' }, { text: 'TWO' }, { text: 'THREE' }]);
  });

  it('runs real calls with prewarm, each in a child started ahead that waited for its call', async () => {
    expect(await runAgent('prewarm')).toEqual([
      { text: 'ONE' },
      { text: 'TWO' },
      { text: 'THREE' },
    ]);
  });
});
