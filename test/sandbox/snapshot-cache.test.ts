// The startup-snapshot cache: another local user must not be able to plant what a sandbox child
// starts from (it receives the tool's secrets), and a modified snapshot is rebuilt, never run.
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LocalProcessSandbox } from '../../src/sandbox/index.js';
import { cacheDirectory, sha256, untrusted } from '../../src/sandbox/snapshot-cache.js';
import { executeTool } from '../../src/tools/execute-tool.js';
import { SecretsProvider } from '../../src/tools/index.js';
import * as hostile from './fixtures/hostile-tools.js';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'veridex-cache-test-')));
const jail = join(base, 'jail');
mkdirSync(jail);
afterAll(() => rmSync(base, { recursive: true, force: true }));

const TOKEN = 'tok-0123456789-secret';
const secrets = SecretsProvider.fromMap({ API_TOKEN: TOKEN });

/** A private cache directory of ours (mode 0700). */
function privateDirectory(name: string): string {
  const directory = join(base, name);
  mkdirSync(directory, { mode: 0o700 });
  return directory;
}

async function echo(cache: string) {
  const sandbox = new LocalProcessSandbox({ jailRoot: jail, cacheDirectory: cache });
  return executeTool(hostile.echoSecret, { arg: '' }, { sandbox, secrets });
}

// A snapshot an attacker built: it starts, reads the request (with the secrets) from stdin,
// drops it in the working directory (the jail) and answers like a real child.
let forgedBlob = '';
let blobName = '';
beforeAll(async () => {
  const forged = join(base, 'forged.cjs');
  writeFileSync(
    forged,
    `const v8 = require('node:v8');
v8.startupSnapshot.setDeserializeMainFunction(() => {
  const fs = require('node:fs');
  fs.writeFileSync('stolen.txt', fs.readFileSync(0, 'utf8'));
  fs.writeSync(3, JSON.stringify({ ok: true, value: { result: 'forged' }, violations: [] }));
  fs.closeSync(3);
  process.exit(0);
});`,
  );
  forgedBlob = join(base, 'forged.blob');
  const flags = [
    '--max-old-space-size=256',
    '--disallow-code-generation-from-strings',
    '--regexp-tier-up-ticks=1000',
  ];
  execFileSync(
    process.execPath,
    [...flags, '--snapshot-blob', forgedBlob, '--build-snapshot', forged],
    {
      cwd: base,
      stdio: 'ignore',
    },
  );
  // Learn the name the sandbox gives this tool's snapshot, from an honest first run.
  const learn = privateDirectory('learn');
  expect(await echo(learn)).toMatchObject({ status: 'success' });
  blobName = readdirSync(learn).find((name) => name.endsWith('.blob'))!;
  expect(blobName).toBeDefined();
}, 120_000);

/** Puts the forged snapshot where the sandbox will look, with a matching recorded digest. */
function plant(directory: string): void {
  copyFileSync(forgedBlob, join(directory, blobName));
  writeFileSync(join(directory, `${blobName}.sha256`), sha256(readFileSync(forgedBlob)));
}

function stolen(): string | undefined {
  const path = join(jail, 'stolen.txt');
  if (!existsSync(path)) return undefined;
  const text = readFileSync(path, 'utf8');
  rmSync(path);
  return text;
}

describe('snapshot cache', () => {
  it('accepts only a directory of ours with mode 0700', () => {
    const good = privateDirectory('good');
    expect(untrusted(good)).toBeUndefined();
    const open = privateDirectory('world');
    chmodSync(open, 0o777);
    expect(untrusted(open)).toMatch(/mode is 777/);
    const group = privateDirectory('group');
    chmodSync(group, 0o770);
    expect(untrusted(group)).toMatch(/mode is 770/);
    symlinkSync(good, join(base, 'link'));
    expect(untrusted(join(base, 'link'))).toMatch(/symlink/);
    writeFileSync(join(base, 'file'), '');
    expect(untrusted(join(base, 'file'))).toMatch(/not a directory/);
  });

  it.skipIf(process.getuid?.() !== 0)(
    'refuses a directory that belongs to another user (needs root to set up)',
    () => {
      const theirs = privateDirectory('theirs');
      chownSync(theirs, 65534, 65534);
      expect(untrusted(theirs)).toMatch(/belongs to uid 65534/);
    },
  );

  it('never starts a snapshot planted in a world-writable cache directory', async () => {
    const planted = privateDirectory('planted');
    chmodSync(planted, 0o777);
    plant(planted);
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      const result = await echo(planted);
      expect(result).toMatchObject({
        status: 'success',
        output: { result: `key=${TOKEN}` },
      });
      expect(stolen()).toBeUndefined();
      expect(String(warn.mock.calls[0]?.[0])).toMatch(/not used: its mode is 777/);
    } finally {
      warn.mockRestore();
    }
    // Nothing of ours was written there either.
    expect(readdirSync(planted).sort()).toEqual([blobName, `${blobName}.sha256`].sort());
    expect(cacheDirectory(planted)).not.toBe(planted);
  });

  it('rebuilds a snapshot modified after it was checked, instead of starting it', async () => {
    const cache = privateDirectory('modified');
    expect(await echo(cache)).toMatchObject({ status: 'success' });
    copyFileSync(forgedBlob, join(cache, blobName)); // the recorded digest no longer matches
    const result = await echo(cache);
    expect(result).toMatchObject({ output: { result: `key=${TOKEN}` } });
    expect(stolen()).toBeUndefined();
  });

  it('(the control) would start the forged snapshot from a private directory with a matching digest', async () => {
    // What the checks above stop: a snapshot the cache believes in runs with the secrets. Only
    // this user (who can already read the secrets) can put one in a private directory.
    const cache = privateDirectory('same-user');
    plant(cache);
    expect(await echo(cache)).toMatchObject({ output: { result: 'forged' } });
    expect(stolen()).toContain(TOKEN);
  });
});
