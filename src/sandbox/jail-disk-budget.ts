// What one IsolatedProcessSandbox call may write to its jail (README "Sandboxes", "What a call
// costs the host"). The jail is a host directory bound read-write: its blocks and inodes are the
// host file system's, which no cgroup counts. Measured, and decided against, on the hosts we run:
// - a quota (ext4/XFS project or user quota) needs the file system mounted with quotas — ours is
//   not, nor are most containers' — and root to set one;
// - a size-capped tmpfs or an overlay with a tmpfs upper directory would bound the call, but
//   bubblewrap 0.8 has no `--overlay` (0.9+), and copying the call's changes back to the host
//   afterwards changes what a tool's writes mean (invisible to the host until the call ends,
//   lost when it is killed, racing other calls on the same jail), at a cost per call that grows
//   with what it changed;
// - RLIMIT_FSIZE bounds one file, not how many.
// So the kernel bounds each file (RLIMIT_FSIZE, set by the call's gate to `jailWriteMb`) and the
// parent's watchdog bounds the call as a whole: it reads the jail's file system (`statfs`, one
// system call) when the call starts and every poll (20 ms) after, and stops the call once the
// file system has lost more than `jailWriteMb` of blocks or `jailWriteFiles` inodes since.
import { statfsSync } from 'node:fs';

/** The jail's bounds of one call. */
export interface JailWriteLimits {
  /** MB the call may take from the jail's file system (and the largest file it may write). */
  jailWriteMb: number;
  /** Inodes (files, directories, links) the call may take from it. */
  jailWriteFiles: number;
}

/** A call's view of its jail's file system (see {@link JailDiskBudget.begin}). */
export class JailDiskBudget {
  readonly #jailRoot: string;
  readonly #limits: JailWriteLimits;

  constructor(jailRoot: string, limits: JailWriteLimits) {
    this.#jailRoot = jailRoot;
    this.#limits = limits;
  }

  /** What the limit error says the call exceeded. */
  get bound(): string {
    return `${this.#limits.jailWriteMb} MB or ${this.#limits.jailWriteFiles} files`;
  }

  /**
   * Reads the file system now; the returned check says whether it has since lost more than the
   * bounds. The whole file system is counted, so what other processes write there during the
   * call counts against it too (a busy one can stop a call early; never late). A file system
   * that reports no inode count (btrfs) is bounded in bytes only; its inodes take blocks. One
   * whose figures cannot be read any more (the jail was removed) counts as exceeded.
   */
  begin(): () => boolean {
    const start = read(this.#jailRoot);
    if (start === undefined) return () => true;
    const maxBytes = this.#limits.jailWriteMb * 1024 * 1024;
    return () => {
      const now = read(this.#jailRoot);
      if (now === undefined) return true;
      const bytes = (start.freeBlocks - now.freeBlocks) * start.blockSize;
      const files = start.freeFiles - now.freeFiles;
      return bytes > maxBytes || (start.files > 0 && files > this.#limits.jailWriteFiles);
    };
  }
}

interface Reading {
  blockSize: number;
  freeBlocks: number;
  files: number;
  freeFiles: number;
}

function read(path: string): Reading | undefined {
  try {
    const stat = statfsSync(path);
    return {
      blockSize: stat.bsize,
      freeBlocks: stat.bfree,
      files: stat.files,
      freeFiles: stat.ffree,
    };
  } catch {
    return undefined;
  }
}
