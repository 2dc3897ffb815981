import { createHash } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// The on-disk cache of child bundles and V8 startup snapshots. Whatever a child starts from
// runs with the tool's secrets, so the cache must be private to this user and every file in it
// must be the one this library wrote: the directory must be ours with mode 0700 (another local
// user could otherwise plant a snapshot), and every file is checked against a SHA-256 recorded
// when it was written before a child may start from it.

const directories = new Map<string, string>();
const temporaries: string[] = [];

/**
 * The cache directory to use for `requested` (default `<tmpdir>/veridex-sandbox-<uid>`), created
 * with mode 0700 if missing. A directory that is a symlink, belongs to someone else, or is
 * group- or world-accessible is not used: a fresh private directory replaces it for the life of
 * this process, and a warning says why.
 */
export function cacheDirectory(requested?: string): string {
  const path = requested ?? join(tmpdir(), `veridex-sandbox-${process.getuid?.() ?? 'user'}`);
  let chosen = directories.get(path);
  if (chosen === undefined) {
    chosen = privateOrReplacement(path);
    directories.set(path, chosen);
  }
  return chosen;
}

function privateOrReplacement(path: string): string {
  try {
    mkdirSync(path, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const problem = untrusted(path);
  if (problem === undefined) return path;
  process.emitWarning(
    `The sandbox cache directory ${path} is not used: ${problem}. Using a fresh private directory for this process; remove ${path} or point cacheDirectory at a directory you own with mode 0700.`,
    { code: 'VERIDEX_UNTRUSTED_CACHE' },
  );
  const replacement = mkdtempSync(
    join(tmpdir(), `veridex-sandbox-${process.getuid?.() ?? 'user'}-`),
  );
  if (temporaries.push(replacement) === 1) {
    process.once('exit', () => {
      for (const directory of temporaries) rmSync(directory, { recursive: true, force: true });
    });
  }
  return replacement;
}

/** Why `path` cannot hold the cache, or `undefined` when it is a private directory of ours. */
export function untrusted(path: string): string | undefined {
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) return 'it is a symlink';
  if (!stat.isDirectory()) return 'it is not a directory';
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) return `it belongs to uid ${stat.uid}, not ${uid}`;
  if ((stat.mode & 0o077) !== 0) {
    return `its mode is ${(stat.mode & 0o777).toString(8)}: others have access (it must be 700)`;
  }
  return undefined;
}

/** SHA-256 (hex) of bytes. */
export function sha256(bytes: string | Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** Writes `bytes` to `path` atomically (mode 0600) and records their SHA-256 beside it. */
export function writeVerified(path: string, bytes: string | Uint8Array): void {
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, bytes, { mode: 0o600 });
  renameSync(temporary, path);
  recordDigest(path, sha256(bytes));
}

/** Records the SHA-256 of a file this process just produced (e.g. a snapshot `node` wrote). */
export function recordDigest(path: string, digest = sha256(readFileSync(path))): void {
  const temporary = `${path}.sha256.${process.pid}.tmp`;
  writeFileSync(temporary, digest, { mode: 0o600 });
  renameSync(temporary, `${path}.sha256`);
}

/** What identifies a file's content without reading it (any write changes `ctime`). */
export interface FileIdentity {
  dev: bigint;
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
}

/**
 * The identity of `path` when it is a regular file of ours (no symlink, one link, not writable
 * by others) whose content matches the SHA-256 recorded for it; otherwise `undefined`.
 */
export function verifiedIdentity(path: string): FileIdentity | undefined {
  const identity = ownFile(path);
  if (identity === undefined) return undefined;
  let fd: number | undefined;
  try {
    const recorded = readFileSync(`${path}.sha256`, 'utf8');
    // O_NOFOLLOW, and the descriptor's identity compared: the file checked is the file read.
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
    const opened = fstatSync(fd, { bigint: true });
    if (opened.dev !== identity.dev || opened.ino !== identity.ino) return undefined;
    if (sha256(readFileSync(fd)) !== recorded) return undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  // Unchanged while we read it? Otherwise the digest proves nothing about what is there now.
  const after = ownFile(path);
  return after && sameIdentity(after, identity) ? identity : undefined;
}

/** The current identity of `path` if it is still a regular file of ours. */
export function ownFile(path: string): FileIdentity | undefined {
  const stat = lstatSync(path, { bigint: true, throwIfNoEntry: false });
  if (stat === undefined || !stat.isFile() || stat.nlink !== 1n) return undefined;
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== BigInt(uid)) return undefined;
  if ((stat.mode & 0o022n) !== 0n) return undefined;
  return {
    dev: stat.dev,
    ino: stat.ino,
    size: stat.size,
    mtimeNs: stat.mtimeNs,
    ctimeNs: stat.ctimeNs,
  };
}

/** True when two identities name the same, unmodified file. */
export function sameIdentity(a: FileIdentity, b: FileIdentity): boolean {
  return (
    a.dev === b.dev &&
    a.ino === b.ino &&
    a.size === b.size &&
    a.mtimeNs === b.mtimeNs &&
    a.ctimeNs === b.ctimeNs
  );
}
