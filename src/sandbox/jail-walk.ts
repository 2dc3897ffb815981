import { constants, existsSync, type Stats } from 'node:fs';
import { type FileHandle, lstat, mkdir, open } from 'node:fs/promises';
import { join } from 'node:path';
import { refuse } from './safe-resolve.js';

const DIRECTORY = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/**
 * How a path below an open directory is named. Node 20 has no `openat()`, but on Linux
 * `/proc/self/fd/<fd>/<name>` is resolved by the kernel from the directory the descriptor
 * holds, whatever has been renamed or swapped since: a walk through descriptors is race-free.
 * Where that is unavailable — not Linux, or under Node's permission model, which checks path
 * strings and refuses `/proc/self/fd` (a LocalProcessSandbox child therefore has its parent walk
 * for it, see `serveJailedFs`) — each step uses the full path and the walk is verified
 * afterwards (see {@link JailWalk.verify}), which narrows the race but does not close it.
 */
let descriptors: boolean | undefined;
// Decided on first use, not at load: a startup snapshot loads this module when no permission
// model is active, and the child it starts may run under one.
function throughDescriptors(): boolean {
  descriptors ??= descriptorPathsWork();
  return descriptors;
}

function descriptorPathsWork(): boolean {
  if (process.platform !== 'linux') return false;
  const permission = (
    process as { permission?: { has(scope: string, reference?: string): boolean } }
  ).permission;
  if (permission !== undefined && !permission.has('fs.read', '/proc/self/fd/0')) return false;
  return existsSync('/proc/self/fd');
}

interface Held {
  handle: FileHandle;
  /** Its full path, for messages and verification. */
  path: string;
  stat: Stats;
}

/**
 * The directories of a path inside a jail, opened one at a time from the jail root with
 * `O_DIRECTORY | O_NOFOLLOW`: a symlink anywhere in the path is refused, never followed.
 * Call {@link close} when done.
 */
export class JailWalk {
  readonly #held: Held[];
  readonly #shown: string;

  private constructor(held: Held[], shown: string) {
    this.#held = held;
    this.#shown = shown;
  }

  /**
   * Opens `root` and then each of `directories` below it (creating missing ones when `create`).
   * @param shown the tool's path, for messages.
   * @throws VeridexError `sandbox_violation` when a component is a symlink; the file system's
   * error (ENOENT, ENOTDIR) otherwise.
   */
  static async open(
    root: string,
    directories: readonly string[],
    shown: string,
    create: boolean,
  ): Promise<JailWalk> {
    const held: Held[] = [];
    const walk = new JailWalk(held, shown);
    try {
      const rootHandle = await open(root, DIRECTORY);
      held.push({ handle: rootHandle, path: root, stat: await rootHandle.stat() });
      for (const name of directories) {
        const at = walk.child(name);
        if (create) await mkdir(at, { mode: 0o700 }).catch(ignoreExisting);
        const handle = await open(at, DIRECTORY).catch((error) => walk.#explain(error, name));
        held.push({ handle, path: join(walk.#here.path, name), stat: await handle.stat() });
      }
      return walk;
    } catch (error) {
      await walk.close();
      throw error;
    }
  }

  get #here(): Held {
    return this.#held[this.#held.length - 1]!;
  }

  /** How to name `name` in the deepest directory: through its descriptor where that works. */
  child(name: string): string {
    const here = this.#here;
    return throughDescriptors() ? `/proc/self/fd/${here.handle.fd}/${name}` : join(here.path, name);
  }

  /** How to name the deepest directory itself. */
  here(): string {
    const here = this.#here;
    return throughDescriptors() ? `/proc/self/fd/${here.handle.fd}` : here.path;
  }

  /**
   * Turns a failed open of `name` into the reason: a symlink is refused as a violation.
   * @throws always.
   */
  async #explain(error: unknown, name: string): Promise<never> {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'ENOTDIR' || code === 'EMLINK') {
      const found = await lstat(this.child(name)).catch(() => undefined);
      if (found?.isSymbolicLink()) {
        refuse(this.#shown, 'the path runs through a symlink, which the jailed fs does not follow');
      }
    }
    throw error;
  }

  /**
   * Opens `name` in the deepest directory without following a symlink, and checks that it is a
   * regular file with one link (a hard link planted in the jail could name a file outside it).
   * @throws VeridexError `sandbox_violation`; the file system's error otherwise.
   */
  async openFile(name: string, flags: number, mode?: number): Promise<FileHandle> {
    const safe = flags | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
    // Without descriptor paths a create could land outside if a directory was swapped since
    // the walk: check first to narrow that window (what remains is documented).
    if (flags & constants.O_CREAT) await this.verify();
    const handle = await open(this.child(name), safe, mode).catch((error) =>
      this.#explain(error, name),
    );
    try {
      const stat = await handle.stat();
      if (!stat.isFile()) refuse(this.#shown, 'it is not a regular file');
      if (stat.nlink > 1) {
        refuse(
          this.#shown,
          `it has ${stat.nlink} hard links, so it may be a file from outside the jail`,
        );
      }
      await this.verify({ name, stat });
      return handle;
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /**
   * Without descriptor paths, each step above resolved a full path, so a directory swapped for
   * a symlink between two steps could have taken the walk outside. Afterwards, every directory
   * (and `file`) still named by its path must be the very one held open — not a symlink, same
   * device and inode. This narrows the window without closing it: each check resolves its path
   * anew, so a second process that swaps the directory back and forth between the checks can
   * pass them all (seen in tests: a few reads out of thousands). Race-free walks need
   * descriptor paths.
   */
  async verify(file?: { name: string; stat: Stats }): Promise<void> {
    if (throughDescriptors()) return;
    const checks = this.#held.map(({ path, stat }) => ({ path, stat }));
    if (file) checks.push({ path: join(this.#here.path, file.name), stat: file.stat });
    for (const { path, stat } of checks) {
      const now = await lstat(path).catch(() => undefined);
      if (
        now === undefined ||
        now.isSymbolicLink() ||
        now.dev !== stat.dev ||
        now.ino !== stat.ino
      ) {
        refuse(this.#shown, 'the path changed while it was opened (a directory was swapped)');
      }
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.#held.splice(0).map(({ handle }) => handle.close()));
  }
}

function ignoreExisting(error: NodeJS.ErrnoException): void {
  if (error.code !== 'EEXIST') throw error;
}
