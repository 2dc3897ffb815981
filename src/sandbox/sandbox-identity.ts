// Which host user an IsolatedProcessSandbox runs its tool as, and what that user must reach
// (README "Sandboxes", "As root"). A root agent never hands its uid to a tool: bubblewrap's user
// namespace maps the caller's uid straight through, so the sandbox's root would be host root.
import { chmodSync, copyFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { VeridexError } from '../errors/index.js';
import { sha256 } from './snapshot-cache.js';

/** A host identity: the uid and gid the sandbox's processes run as. */
export interface SandboxUser {
  uid: number;
  gid: number;
}

/** `nobody:nogroup` on Debian and most distributions: the default identity of a root agent's sandboxes. */
export const DEFAULT_SANDBOX_USER: SandboxUser = { uid: 65534, gid: 65534 };

/**
 * The identity to run a sandbox as: for a root agent, `requested` (default
 * {@link DEFAULT_SANDBOX_USER}); for any other user, `undefined` — the sandbox runs as the agent,
 * which is already unprivileged.
 * @throws VeridexError `config_invalid` for uid or gid 0, a malformed id, or `requested` when the
 * agent is not root (it could not switch to it).
 */
export function sandboxUserFor(requested: SandboxUser | undefined): SandboxUser | undefined {
  const agentIsRoot = process.getuid?.() === 0;
  if (requested !== undefined) {
    for (const [name, id] of Object.entries({ uid: requested.uid, gid: requested.gid })) {
      if (!Number.isInteger(id) || id <= 0 || id >= 0xffffffff) {
        throw new VeridexError(
          'config_invalid',
          `IsolatedProcessSandbox sandboxUser.${name} must be an unprivileged id (an integer from 1 to 4294967294), got ${String(id)}.`,
        );
      }
    }
    if (!agentIsRoot) {
      throw new VeridexError(
        'config_invalid',
        `IsolatedProcessSandbox sandboxUser is for a root agent; this agent runs as uid ${process.getuid?.()} and cannot switch to uid ${requested.uid}. Remove sandboxUser: the sandbox runs as this (unprivileged) user.`,
      );
    }
    return requested;
  }
  return agentIsRoot ? DEFAULT_SANDBOX_USER : undefined;
}

/** Whether `user` may read (`r`), write (`w`) or search (`x`) `path`, by its mode bits. */
export function permits(path: string, user: SandboxUser, want: 'r' | 'w' | 'x'): boolean {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat === undefined) return false;
  const bit = { r: 4, w: 2, x: 1 }[want];
  if (stat.uid === user.uid) return (stat.mode & (bit << 6)) !== 0;
  if (stat.gid === user.gid) return (stat.mode & (bit << 3)) !== 0;
  return (stat.mode & bit) !== 0;
}

/** The first directory above `path` that `user` cannot enter, if any. */
export function unreachableAncestor(path: string, user: SandboxUser): string | undefined {
  for (let directory = dirname(path); ; directory = dirname(directory)) {
    if (!permits(directory, user, 'x')) return directory;
    if (dirname(directory) === directory) return undefined;
  }
}

/**
 * Checks that `user` can reach each path (every directory above it searchable, and the path
 * itself readable unless `readable` is false).
 * @throws VeridexError `config_invalid` naming the option, the path and what to change.
 */
export function requireReachable(
  option: string,
  paths: readonly string[],
  user: SandboxUser,
  { readable = true } = {},
): void {
  for (const path of paths) {
    const blocked = unreachableAncestor(path, user);
    const problem = blocked
      ? `the directory ${blocked} above it is not searchable by uid ${user.uid} (chmod o+x it, or choose a path elsewhere)`
      : !readable || permits(path, user, 'r')
        ? undefined
        : `it is not readable by uid ${user.uid}`;
    if (problem) {
      throw new VeridexError(
        'config_invalid',
        `IsolatedProcessSandbox ${option} ${path} cannot be used by the sandbox's unprivileged user: ${problem}.`,
        { details: { option, path, uid: user.uid } },
      );
    }
  }
}

let shareDirectory: string | undefined;
const shared = new Map<string, string>();

/**
 * `path` as `user` can read it: the path itself when it can, else a copy (mode 0644, owned by
 * this root process, in a directory only root writes) made once per file version. The sandbox
 * cache (mode 0700, see `cacheDirectory`) is private to root, and stays so.
 */
export function readableBy(path: string, user: SandboxUser): string {
  if (unreachableAncestor(path, user) === undefined && permits(path, user, 'r')) return path;
  const stat = statSync(path);
  const key = `${path}\0${stat.ino}\0${stat.size}\0${stat.mtimeMs}`;
  const known = shared.get(key);
  if (known !== undefined && statSync(known, { throwIfNoEntry: false })) return known;
  if (shareDirectory === undefined) {
    shareDirectory = mkdtempSync(join(tmpdir(), 'veridex-isolated-share-'));
    // Searchable, not listable; only root writes in it.
    chmodSync(shareDirectory, 0o711);
    const directory = shareDirectory;
    process.once('exit', () => rmSync(directory, { recursive: true, force: true }));
  }
  const copy = join(shareDirectory, `${sha256(key).slice(0, 16)}-${basename(path)}`);
  copyFileSync(path, copy);
  chmodSync(copy, 0o644);
  shared.set(key, copy);
  return copy;
}
