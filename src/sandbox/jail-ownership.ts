// What an IsolatedProcessSandbox does to the jail on the host side (README "Sandboxes"): hands
// it to the sandbox's unprivileged user before the first call (the set-id sweep around every
// call is jail-sweep.ts).
import {
  closeSync,
  constants,
  type Dirent,
  fchownSync,
  fstatSync,
  openSync,
  readdirSync,
  type Stats,
} from 'node:fs';
import { join } from 'node:path';
import type { SandboxUser } from './sandbox-identity.js';

const OPEN = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
// Bounds the walk, whatever a tool built: a deeper tree is left unvisited below this depth.
const MAX_DEPTH = 64;

/**
 * Visits every file and directory below `root` (and `root` itself) through descriptors: each
 * entry is opened with `O_NOFOLLOW` relative to its directory's descriptor (Linux resolves
 * `/proc/self/fd/<fd>/<name>` from the directory held, whatever was renamed or swapped since,
 * see jail-walk.ts), so a symlink a tool swaps in is never followed out of the jail. Other
 * mounts (another device) are not entered. `visit` gets the open descriptor and its stat.
 */
function walk(root: string, visit: (fd: number, stat: Stats, path: string) => void): void {
  const rootFd = openSync(root, OPEN | constants.O_DIRECTORY);
  try {
    const rootStat = fstatSync(rootFd);
    visit(rootFd, rootStat, '.');
    descend(rootFd, rootStat.dev, '', 0, visit);
  } finally {
    closeSync(rootFd);
  }
}

function descend(
  directoryFd: number,
  device: number,
  prefix: string,
  depth: number,
  visit: (fd: number, stat: Stats, path: string) => void,
): void {
  if (depth >= MAX_DEPTH) return;
  let entries: Dirent[];
  try {
    entries = readdirSync(`/proc/self/fd/${directoryFd}`, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    if (entry.isSymbolicLink() || entry.isSocket()) continue;
    let fd: number;
    try {
      fd = openSync(join(`/proc/self/fd/${directoryFd}`, entry.name), OPEN);
    } catch {
      continue; // gone, or swapped for a symlink (ELOOP): nothing of ours to touch
    }
    try {
      const stat = fstatSync(fd);
      const path = prefix + entry.name;
      visit(fd, stat, path);
      if (stat.isDirectory() && stat.dev === device)
        descend(fd, device, `${path}/`, depth + 1, visit);
    } finally {
      closeSync(fd);
    }
  }
}

/**
 * Makes `user` the owner of the jail and what it holds, so the sandbox can write there as it
 * could when it ran as the agent. Files with more than one hard link are left alone: their
 * other names may be outside the jail, and owning one would let the tool write them.
 */
export function giveJailTo(jailRoot: string, user: SandboxUser): void {
  walk(jailRoot, (fd, stat) => {
    if (stat.uid === user.uid && stat.gid === user.gid) return;
    if (!stat.isDirectory() && stat.nlink > 1) return;
    fchownSync(fd, user.uid, user.gid);
  });
}
