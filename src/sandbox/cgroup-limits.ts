import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

// Per-call control groups for IsolatedProcessSandbox (README, "Sandboxes": what holds with and
// without cgroups). A cgroup charges a call with what it costs the host — user memory, kernel
// memory (page tables, socket buffers, pipes, tmpfs pages) and tasks — where RSS, which the
// watchdog measures, misses kernel objects entirely: a tool can queue hundreds of MB in socket
// buffers with a resident set of 10 MB.

/** Which cgroup hierarchy the limits live in. */
export type CgroupVersion = 'v2' | 'v1';

/** Where per-call cgroups are created: proven writable by creating (and removing) one. */
export interface CgroupHost {
  version: CgroupVersion;
  /** v2: the parent directory of every call's cgroup. v1: the `memory` hierarchy's. */
  memoryParent: string;
  /** v1 only: the `pids` hierarchy's parent, when that controller is mounted. */
  pidsParent?: string;
}

/** What one call may use. */
export interface CgroupLimits {
  /** User and kernel memory together, in bytes (the OOM killer ends the call beyond it). */
  memoryBytes: number;
  /** Tasks (processes and threads); forks beyond it fail with EAGAIN. */
  maxProcesses: number;
}

/** Sources for {@link findCgroupHost}; the defaults read this process's own. */
export interface CgroupSources {
  /** Text of `/proc/self/cgroup`. */
  selfCgroup?: string;
  /** Text of `/proc/self/mountinfo`. */
  mountinfo?: string;
}

let sequence = 0;
/** Waits between attempts to remove a call's cgroup: about 5 s in all, short ones first. */
const REMOVAL_DELAYS_MS = [5, 10, 20, 40, 80, ...Array<number>(48).fill(100)];
/** The name of every per-call cgroup: `veridex-<pid of the agent>-<sequence>-<random>`. */
export const CALL_CGROUP_NAME = /^veridex-(\d+)-\d+-[0-9a-f]+$/;

/**
 * Finds where this process may create per-call cgroups with memory and task limits: a child of
 * its own cgroup, in the v2 hierarchy when `memory` and `pids` are enabled there for children,
 * else in the v1 `memory` (and `pids`) hierarchies. Proves it by creating, limiting and removing
 * a probe cgroup. Returns the reason when none is usable (not root, read-only /sys/fs/cgroup,
 * controllers not delegated).
 */
export function findCgroupHost(sources: CgroupSources = {}): CgroupHost | { reason: string } {
  const own = parseProcCgroup(sources.selfCgroup ?? readOr('/proc/self/cgroup'));
  const mounts = parseMountinfo(sources.mountinfo ?? readOr('/proc/self/mountinfo'));
  const reasons: string[] = [];
  const v2 = directoryOf(mounts, own, 'cgroup2', '');
  if (v2 !== undefined) {
    // Where this process's cgroup may have children with limits (the root of a hierarchy, or
    // a delegated one), ask for the two controllers; elsewhere the probe below says why not.
    writeOptional(join(v2, 'cgroup.subtree_control'), '+memory +pids');
    const host: CgroupHost = { version: 'v2', memoryParent: v2 };
    const problem = probe(host);
    if (problem === undefined) return host;
    reasons.push(`cgroup v2 at ${v2}: ${problem}`);
  }
  const memory = directoryOf(mounts, own, 'cgroup', 'memory');
  if (memory !== undefined) {
    const pids = directoryOf(mounts, own, 'cgroup', 'pids');
    const host: CgroupHost = {
      version: 'v1',
      memoryParent: memory,
      ...(pids ? { pidsParent: pids } : {}),
    };
    const problem = probe(host);
    if (problem === undefined) return host;
    reasons.push(`cgroup v1 memory at ${memory}: ${problem}`);
  }
  if (reasons.length === 0) reasons.push('no cgroup v2 or v1 memory hierarchy is mounted');
  return { reason: reasons.join('; ') };
}

/**
 * One call's cgroup: created with its limits before the call's process starts, joined by that
 * process before it runs anything of the tool, removed once it has exited.
 */
export class CallCgroup {
  readonly #host: CgroupHost;
  readonly #directories: string[];
  #oomKilled = false;

  private constructor(host: CgroupHost, directories: string[]) {
    this.#host = host;
    this.#directories = directories;
  }

  /**
   * Creates a cgroup under `host` with `limits`.
   * @throws the file-system error when the cgroup cannot be created or limited (it is removed).
   */
  static create(host: CgroupHost, limits: CgroupLimits): CallCgroup {
    const name = `veridex-${process.pid}-${++sequence}-${randomBytes(4).toString('hex')}`;
    const parents = [host.memoryParent, ...(host.pidsParent ? [host.pidsParent] : [])];
    const directories: string[] = [];
    const cgroup = new CallCgroup(host, directories);
    try {
      for (const parent of parents) {
        const directory = join(parent, name);
        mkdirSync(directory);
        directories.push(directory);
      }
      cgroup.#limit(limits);
    } catch (error) {
      void cgroup.remove();
      throw error;
    }
    return cgroup;
  }

  /** Moves process `pid` (and so everything it starts from now on) into this cgroup. */
  join(pid: number): void {
    for (const directory of this.#directories) {
      writeFileSync(join(directory, 'cgroup.procs'), String(pid));
    }
  }

  /** Whether the kernel's OOM killer ended a process of this cgroup for exceeding its memory. */
  oomKilled(): boolean {
    const memory = this.#directories[0];
    if (this.#oomKilled || memory === undefined) return this.#oomKilled;
    const file = this.#host.version === 'v2' ? 'memory.events' : 'memory.oom_control';
    const text = readOr(join(memory, file));
    const match = /^oom_kill (\d+)$/m.exec(text);
    this.#oomKilled = match !== null && Number(match[1]) > 0;
    return this.#oomKilled;
  }

  /**
   * Removes the cgroup. The tasks of a PID namespace may take a moment to be reaped after its
   * init exits (rmdir then fails with EBUSY), so removal is retried — on timers that keep this
   * process alive, so that a short-lived agent does not exit with the cgroup still there — for up
   * to about 5 s. The first attempt is synchronous; resolves once the cgroup is gone or the
   * attempts are spent.
   */
  async remove(): Promise<void> {
    // What the cgroup saw is read before it goes.
    this.oomKilled();
    for (const delay of REMOVAL_DELAYS_MS) {
      const left = removeCgroupDirectories(this.#directories);
      this.#directories.splice(0, this.#directories.length, ...left);
      if (left.length === 0) return;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
    const left = removeCgroupDirectories(this.#directories);
    this.#directories.splice(0, this.#directories.length, ...left);
  }

  #limit(limits: CgroupLimits): void {
    const [memory, pids = memory] = this.#directories as [string, string?];
    const bytes = String(limits.memoryBytes);
    if (this.#host.version === 'v2') {
      // memory.max counts kernel memory and socket buffers as well as user pages.
      writeFileSync(join(memory, 'memory.max'), bytes);
      writeOptional(join(memory, 'memory.swap.max'), '0');
      writeFileSync(join(memory, 'pids.max'), String(limits.maxProcesses));
      return;
    }
    writeFileSync(join(memory, 'memory.limit_in_bytes'), bytes);
    // Without this a v1 cgroup could swap beyond its limit (present when swap accounting is on).
    writeOptional(join(memory, 'memory.memsw.limit_in_bytes'), bytes);
    // Kernel memory (slab, socket buffers of Unix sockets, pipes) is charged to
    // memory.limit_in_bytes on current kernels; the kmem limit is deprecated (a no-op since
    // Linux 6.1) but still binds on the older kernels that honour it.
    writeOptional(join(memory, 'memory.kmem.limit_in_bytes'), bytes);
    // TCP buffers are charged in v1 only once this limit is set.
    writeOptional(join(memory, 'memory.kmem.tcp.limit_in_bytes'), bytes);
    if (this.#host.pidsParent !== undefined) {
      writeFileSync(join(pids, 'pids.max'), String(limits.maxProcesses));
    }
  }
}

/**
 * Removes each of `directories` (cgroups: rmdir) that can go now; returns those still there
 * (busy). A directory already gone counts as removed.
 */
export function removeCgroupDirectories(directories: readonly string[]): string[] {
  return directories.filter((directory) => {
    try {
      rmdirSync(directory);
      return false;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code !== 'ENOENT';
    }
  });
}

function probe(host: CgroupHost): string | undefined {
  try {
    // An empty cgroup: the synchronous first attempt removes it.
    void CallCgroup.create(host, { memoryBytes: 256 * 1024 * 1024, maxProcesses: 64 }).remove();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

function writeOptional(path: string, value: string): void {
  if (!existsSync(path)) return;
  try {
    writeFileSync(path, value);
  } catch {
    // Deprecated or unsupported on this kernel: the limits that must hold were written above.
  }
}

function readOr(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

interface CgroupMount {
  root: string;
  mountPoint: string;
  fstype: string;
  superOptions: string[];
}

/** `/proc/self/cgroup`: controller (`''` for v2) → this process's cgroup path. */
export function parseProcCgroup(text: string): Map<string, string> {
  const own = new Map<string, string>();
  for (const line of text.split('\n')) {
    const first = line.indexOf(':');
    const second = line.indexOf(':', first + 1);
    if (first < 0 || second < 0) continue;
    const path = line.slice(second + 1);
    for (const controller of line.slice(first + 1, second).split(',')) own.set(controller, path);
  }
  return own;
}

/** The cgroup mounts of `/proc/self/mountinfo` (octal escapes in paths decoded). */
export function parseMountinfo(text: string): CgroupMount[] {
  const mounts: CgroupMount[] = [];
  for (const line of text.split('\n')) {
    const fields = line.split(' ');
    const separator = fields.indexOf('-');
    if (separator < 0) continue;
    const fstype = fields[separator + 1] ?? '';
    if (fstype !== 'cgroup' && fstype !== 'cgroup2') continue;
    mounts.push({
      root: decodeOctal(fields[3] ?? ''),
      mountPoint: decodeOctal(fields[4] ?? ''),
      fstype,
      superOptions: (fields[separator + 3] ?? '').split(','),
    });
  }
  return mounts;
}

function directoryOf(
  mounts: CgroupMount[],
  own: Map<string, string>,
  fstype: 'cgroup' | 'cgroup2',
  controller: string,
): string | undefined {
  const path = own.get(controller);
  if (path === undefined) return undefined;
  const mount = mounts.find(
    (candidate) =>
      candidate.fstype === fstype &&
      (fstype === 'cgroup2' || candidate.superOptions.includes(controller)) &&
      (path === candidate.root || path.startsWith(`${candidate.root.replace(/\/$/, '')}/`)),
  );
  if (mount === undefined) return undefined;
  const relative = path.slice(mount.root.replace(/\/$/, '').length);
  return resolve(mount.mountPoint, `.${relative}`);
}

function decodeOctal(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) =>
    String.fromCharCode(Number.parseInt(octal, 8)),
  );
}
