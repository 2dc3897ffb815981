import { VeridexError } from '../errors/index.js';
import { CallCgroup, type CgroupHost, findCgroupHost } from './cgroup-limits.js';
import type { SandboxViolation } from './sandbox.js';
import { removeStaleCgroups } from './stale-cgroups.js';

/** The weaker mode {@link SandboxResources} accepts by name in `allowWeaker`. */
export const WEAKER_MEMORY_CGROUP = 'memory_cgroup';

/** What one call's process may cost the host. */
export interface CallLimits {
  /** User and kernel memory of the whole call, in MB. */
  memoryMb: number;
  maxProcesses: number;
  /** Largest file any process of the call may write, in MB (RLIMIT_FSIZE); unbounded when absent. */
  maxFileMb?: number;
}

/** How one call's process is started and accounted (see {@link SandboxResources.forCall}). */
export interface CallResources {
  /** The command and its arguments to put before the sandbox command (the gate). */
  prefix: string[];
  /** Places the started gate process `pid` in the call's cgroup; then it may go on. */
  admit(pid: number): void;
  /** Whether the kernel killed the call for exceeding its memory. */
  oomKilled(): boolean;
  /**
   * Releases what the call held (its cgroup); call once it has exited. Settles once the cgroup
   * is gone (or its removal was given up, after about 5 s).
   */
  release(): Promise<void>;
}

let detected: CgroupHost | { reason: string } | undefined;

/**
 * The resource limits of `IsolatedProcessSandbox` that the kernel enforces on what a call costs
 * the host (README, "Sandboxes"). With a writable cgroup (v2, or v1 `memory` and `pids`), each
 * call runs in its own cgroup: memory counts user pages and kernel memory (socket buffers,
 * pipes, page tables, its tmpfs) and the OOM killer ends the call beyond it; tasks beyond
 * `maxProcesses` cannot be forked. Always, every process of the call has at most `maxOpenFiles`
 * descriptors (RLIMIT_NOFILE, soft and hard), which bounds the kernel buffers it can hold per
 * process where no cgroup counts them.
 *
 * Each call starts behind a gate (`/bin/sh`, which sets the descriptor limit and waits for one
 * line on stdin before it execs bubblewrap): the parent moves the gate into the cgroup first,
 * so nothing of the call ever runs outside it.
 */
export class SandboxResources {
  readonly #host: CgroupHost | undefined;
  readonly #maxOpenFiles: number;
  /** Weaker modes in effect (opted into by name), for the audit log. */
  readonly weakened: readonly string[];

  private constructor(host: CgroupHost | undefined, maxOpenFiles: number, weakened: string[]) {
    this.#host = host;
    this.#maxOpenFiles = maxOpenFiles;
    this.weakened = weakened;
  }

  /**
   * Finds a writable cgroup hierarchy (once per process).
   * @throws VeridexError `sandbox_unavailable` when there is none and `allowWeaker` does not
   * name `memory_cgroup`; `config_invalid` for a malformed `maxOpenFiles`.
   */
  static resolve(options: {
    allowWeaker: readonly string[];
    maxOpenFiles: number;
    cgroups?: () => CgroupHost | { reason: string };
  }): SandboxResources {
    const { maxOpenFiles } = options;
    if (!Number.isSafeInteger(maxOpenFiles) || maxOpenFiles < 32) {
      throw new VeridexError(
        'config_invalid',
        `IsolatedProcessSandbox maxOpenFiles must be an integer of at least 32 (Node needs ~20 descriptors), got ${maxOpenFiles}.`,
      );
    }
    if (options.cgroups === undefined) detected ??= findCgroupHost();
    const found = options.cgroups ? options.cgroups() : detected!;
    if ('version' in found) return new SandboxResources(found, maxOpenFiles, []);
    if (!options.allowWeaker.includes(WEAKER_MEMORY_CGROUP)) {
      throw new VeridexError(
        'sandbox_unavailable',
        `IsolatedProcessSandbox cannot count what a call costs the host: no writable cgroup (${found.reason}). Run the agent as root or in a cgroup delegated to it (systemd Delegate=yes, with memory and pids enabled for its children), or accept per-process descriptor caps instead with allowWeaker: ['${WEAKER_MEMORY_CGROUP}'].`,
        { details: { weaker: WEAKER_MEMORY_CGROUP } },
      );
    }
    return new SandboxResources(undefined, maxOpenFiles, [WEAKER_MEMORY_CGROUP]);
  }

  /** `cgroup_v2`, `cgroup_v1`, or `rlimit` (descriptor caps only: the weaker mode). */
  get mode(): 'cgroup_v2' | 'cgroup_v1' | 'rlimit' {
    return this.#host ? `cgroup_${this.#host.version}` : 'rlimit';
  }

  /**
   * The gate and cgroup of one call.
   * @throws the file-system error when the call's cgroup cannot be created.
   */
  forCall(limits: CallLimits): CallResources {
    const cgroup = this.#host
      ? CallCgroup.create(this.#host, {
          memoryBytes: limits.memoryMb * 1024 * 1024,
          maxProcesses: limits.maxProcesses,
        })
      : undefined;
    return {
      prefix: [
        '/bin/sh',
        '-c',
        // `ulimit` without -S/-H sets both: the tool cannot raise them back (no capabilities).
        // POSIX counts `ulimit -f` in 512-byte blocks (dash, bash as sh, busybox).
        '[ "$1" = - ] || ulimit -f "$1" || exit 125; ulimit -n "$2" || exit 125; shift 2; read -r _ || exit 125; exec "$@"',
        'veridex-gate',
        limits.maxFileMb === undefined ? '-' : String(limits.maxFileMb * 2048),
        String(this.#maxOpenFiles),
      ],
      admit: (pid) => cgroup?.join(pid),
      oomKilled: () => cgroup?.oomKilled() ?? false,
      release: () => cgroup?.remove() ?? Promise.resolve(),
    };
  }

  /**
   * Removes the per-call cgroups that agents no longer running left beside this one's (killed
   * mid-call, or exited with a prewarmed sandbox waiting; see stale-cgroups.ts).
   */
  removeStale(): void {
    if (this.#host) removeStaleCgroups(this.#host);
  }

  /** The audit record of the weaker modes in effect, reported with every call (none: nothing). */
  weakenedNotices(): SandboxViolation[] {
    return this.weakened.map((name) => ({
      capability: 'process',
      target: `sandbox:${name}`,
      reason: `weaker mode opted into (allowWeaker: ${name}): no cgroup counts this call's kernel memory; only ${this.#maxOpenFiles} descriptors per process bound it`,
    }));
  }
}
