import { execFileSync } from 'node:child_process';
import {
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { VeridexError } from '../../src/errors/index.js';
import { createJailedFs, type SandboxViolation } from '../../src/sandbox/index.js';
import { startSwapRacer } from '../support/attack-targets.js';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'veridex-jailed-fs-')));
const jail = join(base, 'jail');
const outside = join(base, 'outside');
mkdirSync(join(jail, 'docs', 'deep'), { recursive: true });
mkdirSync(join(outside, 'b'), { recursive: true });
writeFileSync(join(jail, 'docs', 'a.txt'), 'inside-a');
writeFileSync(join(jail, 'docs', 'deep', 'b.txt'), 'inside-b');
writeFileSync(join(outside, 'secret.txt'), 'SECRET');
writeFileSync(join(outside, 'b', 'file.txt'), 'SECRET');
symlinkSync(outside, join(jail, 'escape'));
symlinkSync(join(outside, 'secret.txt'), join(jail, 'docs', 'secret-link'));
symlinkSync(join(jail, 'docs'), join(jail, 'inner-link'));
symlinkSync('a.txt', join(jail, 'docs', 'relative-link'));
linkSync(join(outside, 'secret.txt'), join(jail, 'hard.txt'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const violations: SandboxViolation[] = [];
const fs = createJailedFs(jail, (violation) => violations.push(violation));

async function refusal(action: Promise<unknown>): Promise<string> {
  try {
    await action;
  } catch (error) {
    if (VeridexError.is(error, 'sandbox_violation')) return String(error.details.reason);
    throw error;
  }
  throw new Error('expected a sandbox_violation');
}

describe('createJailedFs', () => {
  it('reads, writes (creating parents), lists and removes inside the jail', async () => {
    expect(await fs.readText('docs/a.txt')).toBe('inside-a');
    expect(await fs.readText('./docs/../docs/deep/b.txt')).toBe('inside-b');
    await fs.writeFile('new/nested/c.txt', 'hello');
    expect(readFileSync(join(jail, 'new', 'nested', 'c.txt'), 'utf8')).toBe('hello');
    await fs.writeFile('new/nested/c.txt', 'hi');
    expect(await fs.readText('new/nested/c.txt')).toBe('hi');
    expect(await fs.list('new/nested')).toEqual(['c.txt']);
    await fs.remove('new/nested/c.txt');
    expect(existsSync(join(jail, 'new', 'nested', 'c.txt'))).toBe(false);
  });

  it('reads at most maxReadBytes: a longer file is refused, not loaded', async () => {
    const capped = createJailedFs(jail, () => undefined, { maxReadBytes: 4_096 });
    writeFileSync(join(jail, 'fits.bin'), Buffer.alloc(4_096, 1));
    writeFileSync(join(jail, 'big.bin'), Buffer.alloc(10_000, 1));
    expect((await capped.readFile('fits.bin')).length).toBe(4_096);
    let error: unknown;
    try {
      await capped.readFile('big.bin');
    } catch (caught) {
      error = caught;
    }
    expect(VeridexError.is(error, 'sandbox_limit_exceeded')).toBe(true);
    expect((error as VeridexError).details).toMatchObject({ limit: 'file', path: 'big.bin' });
  });

  it('refuses a symlink at any depth, even one that stays inside the jail, and reports it', async () => {
    violations.length = 0;
    for (const path of [
      'escape/secret.txt',
      'docs/secret-link',
      'inner-link/a.txt',
      'docs/relative-link',
    ]) {
      expect(await refusal(fs.readText(path))).toMatch(/symlink/);
    }
    expect(await refusal(fs.list('escape'))).toMatch(/symlink/);
    expect(violations).toHaveLength(5);
    expect(violations[0]).toMatchObject({
      capability: 'fs',
      reason: expect.stringMatching(/symlink/),
    });
  });

  it('never writes through a symlink: the outside file stays as it was', async () => {
    expect(await refusal(fs.writeFile('docs/secret-link', 'pwned'))).toMatch(/symlink/);
    expect(await refusal(fs.writeFile('escape/new.txt', 'pwned'))).toMatch(/symlink/);
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('SECRET');
    expect(existsSync(join(outside, 'new.txt'))).toBe(false);
  });

  it('refuses a hard link planted in the jail, for reading and for writing', async () => {
    expect(await refusal(fs.readText('hard.txt'))).toMatch(/hard links/);
    expect(await refusal(fs.writeFile('hard.txt', 'pwned'))).toMatch(/hard links/);
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('SECRET');
  });

  it('refuses what is not a regular file without blocking on it (a FIFO)', async () => {
    execFileSync('mkfifo', [join(jail, 'pipe')]);
    expect(await refusal(fs.readText('pipe'))).toMatch(/not a regular file/);
  });

  it('removes a planted symlink itself, never its target, and refuses to remove the root', async () => {
    symlinkSync(join(outside, 'secret.txt'), join(jail, 'to-remove'));
    await fs.remove('to-remove');
    expect(lstatSync(join(jail, 'to-remove'), { throwIfNoEntry: false })).toBeUndefined();
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('SECRET');
    expect(await refusal(fs.remove('.'))).toMatch(/jail root/);
  });

  it('refuses lexical escapes before touching the disk', async () => {
    for (const path of ['../outside/secret.txt', '/etc/passwd', 'docs/../../x', 'a\\b', 'a\0b']) {
      await expect(fs.readText(path)).rejects.toMatchObject({ code: 'sandbox_violation' });
    }
  });

  it('never returns a byte from outside the jail, whatever path it is given (property)', async () => {
    const segment = fc.constantFrom(
      'docs',
      'deep',
      'escape',
      'inner-link',
      '..',
      '.',
      'a.txt',
      'b',
      'file.txt',
      'secret-link',
      'secret.txt',
      'hard.txt',
      'relative-link',
      '',
    );
    await fc.assert(
      fc.asyncProperty(fc.array(segment, { minLength: 1, maxLength: 5 }), async (segments) => {
        const path = segments.join('/');
        try {
          const text = await fs.readText(path);
          expect(text.startsWith('inside-')).toBe(true);
        } catch (error) {
          expect((error as { code?: string }).code).not.toBeUndefined();
        }
      }),
      { numRuns: 300 },
    );
  });

  it('is not fooled by a directory swapped for a symlink mid-walk (a racing second process)', async () => {
    const arena = join(jail, 'race');
    mkdirSync(join(arena, 'a', 'b'), { recursive: true });
    writeFileSync(join(arena, 'a', 'b', 'file.txt'), 'inside');
    const racer = startSwapRacer(arena, 'a', outside);
    const seen: Record<string, number> = {};
    try {
      await racer.started;
      let disturbed = 0;
      for (let round = 0; round < 20_000 && (disturbed < 50 || !seen.inside); round++) {
        let outcome: string;
        try {
          outcome = await fs.readText('race/a/b/file.txt');
          await fs.writeFile('race/a/b/written.txt', 'x');
        } catch (error) {
          outcome = `error:${(error as { code?: string }).code}`;
        }
        if (outcome !== 'inside') disturbed++;
        seen[outcome] = (seen[outcome] ?? 0) + 1;
      }
    } finally {
      await racer.stop();
    }
    expect(seen.SECRET, JSON.stringify(seen)).toBeUndefined();
    expect(existsSync(join(outside, 'b', 'written.txt'))).toBe(false);
    // The race really ran: some reads hit a moment when the directory was away or a symlink.
    expect(
      Boolean(seen.inside) && Object.keys(seen).some((outcome) => outcome !== 'inside'),
      JSON.stringify(seen),
    ).toBe(true);
  }, 120_000);
});
