import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { VeridexError } from '../../src/errors/index.js';
import { safeResolve, safeResolveSync } from '../../src/sandbox/index.js';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'veridex-jail-')));
const jail = join(base, 'jail');
const outside = join(base, 'outside');
mkdirSync(join(jail, 'docs', 'deep'), { recursive: true });
mkdirSync(outside);
writeFileSync(join(jail, 'docs', 'a.txt'), 'a');
writeFileSync(join(outside, 'secret.txt'), 'secret');
symlinkSync(outside, join(jail, 'escape'));
symlinkSync(join(outside, 'secret.txt'), join(jail, 'docs', 'secret-link'));
symlinkSync(join(jail, 'docs'), join(jail, 'inner-link'));
symlinkSync('loop-b', join(jail, 'loop-a'));
symlinkSync('loop-a', join(jail, 'loop-b'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

async function refusal(path: unknown): Promise<string> {
  try {
    await safeResolve(jail, path);
  } catch (error) {
    if (VeridexError.is(error, 'sandbox_violation')) return String(error.details.reason);
    throw error;
  }
  throw new Error(`expected ${String(path)} to be refused`);
}

function isInside(target: string): boolean {
  const rest = relative(jail, target);
  return rest === '' || (!rest.startsWith(`..${sep}`) && rest !== '..' && !rest.startsWith(sep));
}

describe('safeResolve', () => {
  it('resolves relative paths inside the jail, existing or not', async () => {
    expect(await safeResolve(jail, 'docs/a.txt')).toBe(join(jail, 'docs', 'a.txt'));
    expect(await safeResolve(jail, './docs/../docs/deep/new.txt')).toBe(
      join(jail, 'docs', 'deep', 'new.txt'),
    );
    expect(await safeResolve(jail, 'not/yet/there.txt')).toBe(
      join(jail, 'not', 'yet', 'there.txt'),
    );
    expect(await safeResolve(jail, '')).toBe(jail);
    expect(safeResolveSync(jail, 'docs/a.txt')).toBe(join(jail, 'docs', 'a.txt'));
  });

  it('follows a symlink that stays inside the jail', async () => {
    expect(await safeResolve(jail, 'inner-link/a.txt')).toBe(join(jail, 'docs', 'a.txt'));
  });

  it.each([
    ['/etc/passwd', /absolute/],
    ['C:/Windows/win.ini', /absolute/],
    ['../outside/secret.txt', /leaves the jail/],
    ['docs/../../outside', /leaves the jail/],
    ['docs/a.txt\0.png', /NUL/],
    ['..\\outside', /backslash/],
    ['escape/secret.txt', /symlink/],
    ['escape/not-there.txt', /symlink/],
    ['docs/secret-link', /symlink/],
    ['loop-a/file', /symlink loop/],
    [42, /string/],
  ])('refuses %j', async (path, reason) => {
    expect(await refusal(path)).toMatch(reason);
  });

  it('never returns a path outside the jail, whatever the input (property)', async () => {
    const segment = fc.constantFrom(
      '..',
      '.',
      'loop-a',
      'docs',
      'deep',
      'escape',
      'inner-link',
      'secret-link',
      'a.txt',
      '',
      'x',
      '\0',
      '~',
      '%2e%2e',
    );
    const path = fc.oneof(
      fc.array(segment, { maxLength: 8 }).map((parts) => parts.join('/')),
      fc.array(segment, { maxLength: 8 }).map((parts) => `/${parts.join('/')}`),
      fc.string({ maxLength: 30 }),
    );
    await fc.assert(
      fc.asyncProperty(path, async (candidate) => {
        try {
          const resolved = await safeResolve(jail, candidate);
          expect(isInside(resolved)).toBe(true);
          if (existsSync(resolved)) expect(isInside(realpathSync(resolved))).toBe(true);
        } catch (error) {
          if (!VeridexError.is(error, 'sandbox_violation')) throw error;
        }
      }),
      { numRuns: 400 },
    );
  });
});
