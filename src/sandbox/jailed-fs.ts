import { constants } from 'node:fs';
import { type FileHandle, readdir, unlink } from 'node:fs/promises';
import { VeridexError } from '../errors/index.js';
import type { JailedFs } from '../tools/types.js';
import { JailWalk } from './jail-walk.js';
import { jailComponents, refuse } from './safe-resolve.js';
import type { SandboxViolation } from './sandbox.js';

type Report = (violation: SandboxViolation) => void;

/** Reports `error` to `report` when it is a refused path (`sandbox_violation`), else nothing. */
export function reportFsViolation(error: unknown, report: Report): void {
  if (!VeridexError.is(error, 'sandbox_violation')) return;
  report({
    capability: 'fs',
    target: String(error.details.path),
    reason: String(error.details.reason),
  });
}

/**
 * A file system view jailed to `root`: tools read and write inside it only. Every path is
 * checked lexically ({@link jailComponents}) and then walked one directory at a time from the
 * jail root with `O_NOFOLLOW`, each step relative to the directory already open (see
 * `JailWalk`): a symlink anywhere in the path is refused rather than followed, so neither a
 * planted symlink nor one swapped in mid-walk leads outside. Files must be regular files with a
 * single link (a hard link planted in the jail may be a file from outside); writes create
 * missing parent directories inside the jail. `maxReadBytes` caps what one read may return
 * (`sandbox_limit_exceeded` beyond it; default: no cap).
 *
 * @example const fs = createJailedFs('/srv/jail', () => {}); await fs.writeFile('a.txt', 'hi');
 */
export function createJailedFs(
  root: string,
  report: Report,
  options: { maxReadBytes?: number } = {},
): JailedFs {
  const maxReadBytes = options.maxReadBytes ?? Number.POSITIVE_INFINITY;
  const reported = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      reportFsViolation(error, report);
      throw error;
    }
  };
  // Runs `use` with the walk to the parent of `path` and the last component's name.
  const inParent = async <T>(
    path: string,
    create: boolean,
    use: (walk: JailWalk, name: string) => Promise<T>,
  ): Promise<T> => {
    const parts = jailComponents(path);
    const name = parts.pop();
    if (name === undefined) refuse(path, 'this is the jail root itself');
    const walk = await JailWalk.open(root, parts, path, create);
    try {
      return await use(walk, name);
    } finally {
      await walk.close();
    }
  };
  return Object.freeze({
    root,
    readFile(path: string): Promise<Buffer> {
      return reported(() =>
        inParent(path, false, async (walk, name) => {
          const handle = await walk.openFile(name, constants.O_RDONLY);
          try {
            return await readAtMost(handle, maxReadBytes, path);
          } finally {
            await handle.close();
          }
        }),
      );
    },
    async readText(path: string): Promise<string> {
      return (await this.readFile(path)).toString('utf8');
    },
    writeFile(path: string, data: string | Uint8Array): Promise<void> {
      return reported(() =>
        inParent(path, true, async (walk, name) => {
          // No O_TRUNC: nothing is changed before the file is known to be the right one.
          const handle = await walk.openFile(name, constants.O_WRONLY | constants.O_CREAT, 0o600);
          try {
            await handle.truncate(0);
            await handle.writeFile(data);
          } finally {
            await handle.close();
          }
        }),
      );
    },
    list(path = '.'): Promise<string[]> {
      return reported(async () => {
        const walk = await JailWalk.open(root, jailComponents(path), path, false);
        try {
          const names = await readdir(walk.here());
          await walk.verify();
          return names.sort();
        } finally {
          await walk.close();
        }
      });
    },
    remove(path: string): Promise<void> {
      return reported(async () => {
        if (jailComponents(path).length === 0) refuse(path, 'the jail root cannot be removed');
        await inParent(path, false, async (walk, name) => {
          await walk.verify();
          // unlink never follows a symlink: a planted one is removed, its target untouched.
          await unlink(walk.child(name));
        });
      });
    },
  });
}

// The whole file, or `sandbox_limit_exceeded` once it is longer than `maxBytes` (also when it
// grows while being read): never more than `maxBytes + 1` bytes in memory.
async function readAtMost(handle: FileHandle, maxBytes: number, path: string): Promise<Buffer> {
  if (maxBytes === Number.POSITIVE_INFINITY) return handle.readFile();
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const chunk = Buffer.allocUnsafe(Math.min(65_536, maxBytes + 1 - total));
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
    if (bytesRead === 0) return Buffer.concat(chunks, total);
    chunks.push(chunk.subarray(0, bytesRead));
    total += bytesRead;
    if (total > maxBytes) {
      throw new VeridexError(
        'sandbox_limit_exceeded',
        `File ${JSON.stringify(path.slice(0, 200))} is larger than the ${maxBytes} bytes a sandboxed tool can read at once.`,
        { details: { limit: 'file', path: path.slice(0, 200) } },
      );
    }
  }
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
