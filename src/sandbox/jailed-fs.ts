import { constants } from 'node:fs';
import { mkdir, open, readdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { VeridexError } from '../errors/index.js';
import type { JailedFs } from '../tools/types.js';
import { safeResolve } from './safe-resolve.js';
import type { SandboxViolation } from './sandbox.js';

type Report = (violation: SandboxViolation) => void;

/**
 * A file system view whose every path goes through {@link safeResolve}: tools read and write
 * inside `root` only. Files are opened with O_NOFOLLOW so a symlink swapped in after the check
 * is not followed; writes create missing parent directories inside the jail.
 *
 * @example const fs = createJailedFs('/srv/jail', () => {}); await fs.writeFile('a.txt', 'hi');
 */
export function createJailedFs(root: string, report: Report): JailedFs {
  const resolveIn = async (path: string): Promise<string> => {
    try {
      return await safeResolve(root, path);
    } catch (error) {
      if (VeridexError.is(error, 'sandbox_violation')) {
        report({
          capability: 'fs',
          target: String(error.details.path),
          reason: String(error.details.reason),
        });
      }
      throw error;
    }
  };
  return Object.freeze({
    root,
    async readFile(path: string): Promise<Buffer> {
      const handle = await open(await resolveIn(path), constants.O_RDONLY | constants.O_NOFOLLOW);
      try {
        return await handle.readFile();
      } finally {
        await handle.close();
      }
    },
    async readText(path: string): Promise<string> {
      return (await this.readFile(path)).toString('utf8');
    },
    async writeFile(path: string, data: string | Uint8Array): Promise<void> {
      const target = await resolveIn(path);
      await mkdir(dirname(target), { recursive: true });
      const flags =
        constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW;
      const handle = await open(target, flags, 0o600);
      try {
        await handle.writeFile(data);
      } finally {
        await handle.close();
      }
    },
    async list(path = '.'): Promise<string[]> {
      return (await readdir(await resolveIn(path))).sort();
    },
    async remove(path: string): Promise<void> {
      const target = await resolveIn(path);
      if (target === (await resolveIn('.'))) {
        report({
          capability: 'fs',
          target: JSON.stringify(path),
          reason: 'the jail root cannot be removed',
        });
        throw new VeridexError('sandbox_violation', 'Removing the jail root is not allowed.', {
          details: { capability: 'fs', path, reason: 'jail root' },
        });
      }
      await rm(target, { recursive: false });
    },
  });
}

/** A file system that refuses everything with `sandbox_violation` (no jail configured). */
export function deniedFs(report: Report, why: string): JailedFs {
  const deny = async (path: unknown): Promise<never> => {
    const target = typeof path === 'string' ? JSON.stringify(path.slice(0, 200)) : '(none)';
    report({ capability: 'fs', target, reason: why });
    throw new VeridexError('sandbox_violation', `File access to ${target} refused: ${why}.`, {
      details: { capability: 'fs', path: target, reason: why },
    });
  };
  return Object.freeze({
    root: '',
    readFile: deny,
    readText: deny,
    writeFile: deny,
    list: deny,
    remove: deny,
  });
}
