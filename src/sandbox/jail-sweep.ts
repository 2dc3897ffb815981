// The set-id sweep of an IsolatedProcessSandbox's jail (README "Sandboxes", "As root"), walked
// in slices so the agent's event loop is never held for long, whatever the tool left there: a
// jail of 300,000 files walked in one go held it for 2–3 s, before and after every later call.
import {
  closeSync,
  constants,
  type Dir,
  type Dirent,
  fchmodSync,
  fstatSync,
  lstatSync,
  opendirSync,
  openSync,
  type Stats,
} from 'node:fs';
import { setImmediate as yieldToLoop } from 'node:timers/promises';

const OPEN = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
// The same depth bound as the ownership walk (jail-ownership.ts): a deeper tree is left unvisited.
const MAX_DEPTH = 64;
/** Longest the sweep holds the event loop at once, in ms, before it lets other work run. */
export const SWEEP_SLICE_MS = 8;

/** What a jail holds: allocated bytes and inodes, as the walk counts them (hard links twice). */
export interface JailUsage {
  bytes: number;
  files: number;
  /** A directory lay deeper than the walk goes: what it holds is not counted. */
  truncated: boolean;
}

/** What a walk does besides walking. */
interface WalkOptions {
  /** Remove set-id bits (the sweep), or only look (a measurement during a call). */
  strip: boolean;
  usage: JailUsage;
}

interface Level {
  /** The directory's descriptor, which names its entries. */
  fd: number;
  /** Whether the walk opened `fd` (and closes it with the level). */
  owned: boolean;
  entries: Dir;
  prefix: string;
  depth: number;
  device: number;
}

/**
 * Removes set-uid and set-gid bits from everything below `root` (and `root` itself); resolves
 * to the jail-relative paths that had them. The walk goes through descriptors, as the ownership
 * walk does (each entry named `/proc/self/fd/<directory fd>/<name>`, opened with `O_NOFOLLOW`):
 * a symlink is never followed, other mounts are not entered. A file that is not a directory is
 * only `lstat`ed — one system call — and opened (then checked again on its descriptor) only
 * when it carries a bit; directories are read a few entries at a time. Every
 * {@link SWEEP_SLICE_MS} it yields to the event loop, so its cost is spread, never held.
 */
export async function stripSetIdBitsInSlices(
  root: string,
  usage: JailUsage = emptyUsage(),
): Promise<string[]> {
  return walkInSlices(root, { strip: true, usage });
}

/**
 * Measures what the jail holds, without changing anything, in the same yielding walk; gives up
 * (undefined) once it has taken `budgetMs`, so a jail too large to measure quickly is not
 * measured (README "Sandboxes": the watchdog then keeps the file system's figure).
 */
export async function measureJailInSlices(
  root: string,
  budgetMs: number,
): Promise<JailUsage | undefined> {
  const usage = emptyUsage();
  const deadline = performance.now() + budgetMs;
  try {
    await walkInSlices(root, { strip: false, usage }, deadline);
  } catch {
    return undefined;
  }
  return performance.now() > deadline ? undefined : usage;
}

export function emptyUsage(): JailUsage {
  return { bytes: 0, files: 0, truncated: false };
}

async function walkInSlices(
  root: string,
  options: WalkOptions,
  deadline = Number.POSITIVE_INFINITY,
): Promise<string[]> {
  const found: string[] = [];
  const levels: Level[] = [];
  let slice = performance.now();
  const rootFd = openSync(root, OPEN | constants.O_DIRECTORY);
  try {
    const rootStat = fstatSync(rootFd);
    strip(rootFd, rootStat, '.', found, options);
    const top = level(rootFd, rootStat.dev, '', 0, false);
    if (top) levels.push(top);
    while (levels.length > 0) {
      if (performance.now() - slice > SWEEP_SLICE_MS) {
        await yieldToLoop();
        slice = performance.now();
        if (slice > deadline) break;
      }
      const here = levels[levels.length - 1]!;
      let entry: Dirent | null;
      try {
        entry = here.entries.readSync();
      } catch {
        entry = null;
      }
      if (entry === null) {
        close(levels.pop()!);
        continue;
      }
      const below = visit(here, entry, found, options);
      if (below) levels.push(below);
    }
  } finally {
    for (const open of levels.splice(0)) close(open);
    closeSync(rootFd);
  }
  return found;
}

/** One entry: stripped if it carries a bit; a directory below the depth bound is returned to walk. */
function visit(
  here: Level,
  entry: Dirent,
  found: string[],
  options: WalkOptions,
): Level | undefined {
  if (entry.isSymbolicLink() || entry.isSocket()) {
    options.usage.files += 1;
    return undefined;
  }
  const at = `/proc/self/fd/${here.fd}/${entry.name}`;
  const path = here.prefix + entry.name;
  // A known non-directory needs its mode only: one lstat, no descriptor.
  const known =
    entry.isFile() || entry.isFIFO() || entry.isCharacterDevice() || entry.isBlockDevice();
  if (known) {
    let stat: Stats;
    try {
      stat = lstatSync(at);
    } catch {
      return undefined; // gone since it was listed
    }
    if (stat.isSymbolicLink() || (stat.mode & 0o6000) === 0) {
      count(stat, options.usage);
      return undefined;
    }
  }
  let fd: number;
  try {
    fd = openSync(at, OPEN);
  } catch {
    return undefined; // gone, or swapped for a symlink (ELOOP): nothing of ours to touch
  }
  let keep = false;
  try {
    const stat = fstatSync(fd);
    strip(fd, stat, path, found, options);
    if (!stat.isDirectory() || stat.dev !== here.device) return undefined;
    if (here.depth + 1 >= MAX_DEPTH) {
      options.usage.truncated = true;
      return undefined;
    }
    const below = level(fd, here.device, `${path}/`, here.depth + 1, true);
    keep = below !== undefined;
    return below;
  } finally {
    if (!keep) closeSync(fd);
  }
}

function strip(fd: number, stat: Stats, path: string, found: string[], options: WalkOptions): void {
  count(stat, options.usage);
  if ((stat.mode & 0o6000) === 0 || !options.strip) return;
  fchmodSync(fd, stat.mode & 0o1777);
  found.push(path);
}

function count(stat: Stats, usage: JailUsage): void {
  usage.files += 1;
  usage.bytes += stat.blocks * 512;
}

/** A directory to read, or undefined when it cannot be listed (gone, or not readable). */
function level(
  fd: number,
  device: number,
  prefix: string,
  depth: number,
  owned: boolean,
): Level | undefined {
  try {
    return { fd, owned, entries: opendirSync(`/proc/self/fd/${fd}`), prefix, depth, device };
  } catch {
    return undefined;
  }
}

function close(open: Level): void {
  try {
    open.entries.closeSync();
  } catch {
    // already closed
  }
  if (open.owned) closeSync(open.fd);
}
