import { realpathSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { isAbsolute, posix, relative, resolve, sep } from 'node:path';
import { VeridexError } from '../errors/index.js';

/**
 * Resolves a tool-supplied `path` inside `jailRoot`, or refuses. Rejected: non-strings, NUL
 * bytes, backslashes, absolute paths, `..` segments that leave the jail, and symlinks (at any
 * depth) whose real target lies outside the jail. Paths that do not exist yet (for writes)
 * are checked through their nearest existing ancestor. Returns the real absolute path.
 *
 * A check, not a lock: a symlink planted between this check and the open is not caught here.
 * The jailed fs does not rely on it: it walks the path one directory descriptor at a time.
 *
 * @throws VeridexError `sandbox_violation` with `details.reason`.
 * @example await safeResolve('/srv/jail', 'reports/q1.csv') // '/srv/jail/reports/q1.csv'
 */
export async function safeResolve(jailRoot: string, path: unknown): Promise<string> {
  const { root, candidate } = lexical(jailRoot, path, realpathSync);
  return confine(root, candidate, path as string, await realExisting(candidate));
}

/** Synchronous {@link safeResolve}. @throws VeridexError `sandbox_violation`. */
export function safeResolveSync(jailRoot: string, path: unknown): string {
  const { root, candidate } = lexical(jailRoot, path, realpathSync);
  return confine(root, candidate, path as string, realExistingSync(candidate));
}

/**
 * The components of a tool-supplied path relative to a jail, checked lexically (no file system
 * access): non-strings, NUL bytes, backslashes, absolute paths and `..` that leaves the jail
 * are refused; `.`, empty segments and `a/..` pairs are dropped. `''` and `'.'` give `[]`.
 *
 * @throws VeridexError `sandbox_violation` with `details.reason`.
 * @example jailComponents('docs/./q1/../q2.csv') // ['docs', 'q2.csv']
 */
export function jailComponents(path: unknown): string[] {
  checkSyntax(path);
  const normalized = posix.normalize(path);
  if (normalized === '..' || normalized.startsWith('../')) refuse(path, '".." leaves the jail');
  return normalized.split('/').filter((part) => part !== '' && part !== '.');
}

function checkSyntax(path: unknown): asserts path is string {
  if (typeof path !== 'string') refuse(String(path), 'the path must be a string');
  if (path.includes('\0')) refuse(path, 'the path contains a NUL byte');
  if (path.includes('\\')) refuse(path, 'the path contains a backslash; use "/"');
  if (isAbsolute(path) || posix.isAbsolute(path) || /^[A-Za-z]:/.test(path)) {
    refuse(path, 'absolute paths are not allowed; give a path relative to the jail');
  }
}

function lexical(jailRoot: string, path: unknown, real: (path: string) => string) {
  checkSyntax(path);
  const root = real(jailRoot);
  const candidate = resolve(root, path);
  if (!inside(root, candidate)) refuse(path, '".." leaves the jail');
  return { root, candidate };
}

// The real path of `candidate`: realpath of its nearest existing ancestor plus the rest.
async function realExisting(candidate: string): Promise<string> {
  let existing = candidate;
  for (;;) {
    try {
      return resolve(await realpath(existing), relative(existing, candidate));
    } catch (error) {
      const parent = resolve(existing, '..');
      if (!walkUp(error) || parent === existing) throw error;
      existing = parent;
    }
  }
}

function realExistingSync(candidate: string): string {
  let existing = candidate;
  for (;;) {
    try {
      return resolve(realpathSync(existing), relative(existing, candidate));
    } catch (error) {
      const parent = resolve(existing, '..');
      if (!walkUp(error) || parent === existing) throw error;
      existing = parent;
    }
  }
}

// A missing component (ENOENT) or a file used as a directory (ENOTDIR): check the ancestor.
function walkUp(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ELOOP') refuse('(path)', 'it runs into a symlink loop');
  return code === 'ENOENT' || code === 'ENOTDIR';
}

function confine(root: string, candidate: string, path: string, real: string): string {
  if (!inside(root, real)) refuse(path, 'a symlink leads outside the jail');
  return real === candidate ? candidate : real;
}

function inside(root: string, target: string): boolean {
  const rest = relative(root, target);
  return rest === '' || (!rest.startsWith(`..${sep}`) && rest !== '..' && !isAbsolute(rest));
}

/** Throws the jail's `sandbox_violation` for `path`. */
export function refuse(path: string, reason: string): never {
  const shown = JSON.stringify(path.length > 200 ? `${path.slice(0, 200)}…` : path);
  throw new VeridexError('sandbox_violation', `File access to ${shown} refused: ${reason}.`, {
    details: { capability: 'fs', path: shown, reason },
  });
}
