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
// system call) when the call starts and every poll (20 ms) after. The file system is shared:
// when it has lost more than `jailWriteMb` of blocks or `jailWriteFiles` inodes, the jail itself
// is measured (the same yielding walk as the set-id sweep, against what the sweep before the call
// found) and the call is stopped only if its jail grew past a bound; what others wrote is set
// aside. A jail that cannot be measured within CONFIRM_BUDGET_MS, or holds a tree deeper than the
// walk goes, is judged by the file system's figure alone (the call is stopped).
import { statfsSync } from 'node:fs';
import { type JailUsage, measureJailInSlices } from './jail-sweep.js';

/** Longest a measurement of the jail may take before the file system's figure decides. */
export const CONFIRM_BUDGET_MS = 1000;

/** One call's watch over its jail (see {@link JailDiskBudget.begin}). */
export interface JailDiskWatch {
  /** Whether the call is known to be over a bound (a measurement may be under way). */
  exceeded(): boolean;
  /** After the call: whether it ended over a bound, measuring the jail if the figure says so. */
  settle(): Promise<boolean>;
}

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
   * Reads the file system now and watches it for the call. `baseline` is what the jail held
   * when the call started (the sweep before it); without one, the file system's figure alone
   * decides. A file system that reports no inode count (btrfs) is bounded in bytes only; its
   * inodes take blocks. One whose figures cannot be read any more (the jail was removed)
   * counts as exceeded.
   */
  begin(baseline?: JailUsage): JailDiskWatch {
    const start = read(this.#jailRoot);
    if (start === undefined) return { exceeded: () => true, settle: async () => true };
    const maxBytes = this.#limits.jailWriteMb * 1024 * 1024;
    const maxFiles = this.#limits.jailWriteFiles;
    const countsFiles = start.files > 0;
    // What the file system lost that the jail did not gain: other processes' writes.
    const others = { bytes: 0, files: 0 };
    let over = false;
    let measuring: Promise<void> | undefined;
    const lost = (now: Reading) => ({
      bytes: (start.freeBlocks - now.freeBlocks) * start.blockSize - others.bytes,
      files: start.freeFiles - now.freeFiles - others.files,
    });
    const beyond = (amount: { bytes: number; files: number }) =>
      amount.bytes > maxBytes || (countsFiles && amount.files > maxFiles);
    const measure = (seen: { bytes: number; files: number }) => {
      measuring ??= (async () => {
        const usage =
          baseline === undefined
            ? undefined
            : await measureJailInSlices(this.#jailRoot, CONFIRM_BUDGET_MS);
        if (usage === undefined || usage.truncated) {
          over = true;
          return;
        }
        const grew = {
          bytes: usage.bytes - baseline!.bytes,
          files: usage.files - baseline!.files,
        };
        if (beyond(grew)) {
          over = true;
          return;
        }
        others.bytes += Math.max(0, seen.bytes - Math.max(0, grew.bytes));
        others.files += Math.max(0, seen.files - Math.max(0, grew.files));
      })().finally(() => {
        measuring = undefined;
      });
      return measuring;
    };
    const check = (): Promise<void> | undefined => {
      if (over) return undefined;
      const now = read(this.#jailRoot);
      if (now === undefined) {
        over = true;
        return undefined;
      }
      const seen = lost(now);
      return beyond(seen) ? measure(seen) : undefined;
    };
    return {
      exceeded: () => {
        void check();
        return over;
      },
      settle: async () => {
        await measuring;
        await check();
        return over;
      },
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
