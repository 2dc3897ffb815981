import { chmodSync, chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VeridexError } from '../errors/index.js';
import { type Bubblewrap, bubblewrap, EGRESS_SOCKET, sandboxArgs } from './bubblewrap.js';
import {
  childEnvironment,
  childRequestFor,
  networkAllowlists,
  settle,
  toolModule,
  WarmChildren,
} from './child-call.js';
import { type ChildEntry, childEntryFor } from './child-entry.js';
import { EgressProxy } from './egress-proxy.js';
import {
  type IsolatedConfiguration,
  resolveHardening,
  sweepJail,
  type WeakerMode,
  weakenedNotice,
} from './isolated-hardening.js';
import { JailDiskBudget } from './jail-disk-budget.js';
import { type KernelPoolLimits, poolsPrefix } from './kernel-pools.js';
import {
  childV8Flags,
  type ProcessSandboxOptions,
  type ResolvedProcessOptions,
  resolveProcessOptions,
} from './process-sandbox-options.js';
import { readProcessTreeUsage } from './process-usage.js';
import type { Sandbox, SandboxRunRequest } from './sandbox.js';
import { RSS_HEADROOM_MB, SandboxChild } from './sandbox-child.js';
import { readableBy, type SandboxUser } from './sandbox-identity.js';
import { SandboxResources } from './sandbox-resources.js';
import { seccompProgram } from './seccomp-filter.js';

/** Options for {@link IsolatedProcessSandbox}. */
export interface IsolatedProcessSandboxOptions extends ProcessSandboxOptions {
  /** The bubblewrap binary (default: `bwrap` on PATH). */
  bwrapPath?: string;
  /**
   * Processes and threads the sandbox may run at once (default 64; Node alone runs ~8
   * threads). Beyond it the call is stopped (`sandbox_limit_exceeded`, `details.limit:
   * 'processes'`); where the host user is not root the kernel also refuses the extra forks.
   */
  maxProcesses?: number;
  /**
   * Descriptors each process of the sandbox may hold (RLIMIT_NOFILE, default 128): with or
   * without a cgroup, a bound on the kernel buffers (sockets, pipes) one process can fill.
   */
  maxOpenFiles?: number;
  /** Size of the private `/tmp` (memory-backed) in MB (default 64). */
  tmpMb?: number;
  /**
   * MB one call may take from the jail's file system, and the largest file any of its processes
   * may write (default 256). Beyond it the call is stopped (`sandbox_limit_exceeded`,
   * `details.limit: 'disk'`). The jail is a host directory: without this, a call fills the
   * host's disk.
   */
  jailWriteMb?: number;
  /**
   * Inodes (files, directories, links) one call may take from the jail's file system (default
   * 10 000); beyond it the call is stopped (`details.limit: 'disk'`).
   */
  jailWriteFiles?: number;
  /**
   * inotify instances one call may hold (default 8; `fs.watch` needs one per process). Counted
   * host-wide per user (`fs.inotify.max_user_instances`, 128 by default), which every sandbox of
   * a root agent shares.
   */
  maxInotifyInstances?: number;
  /** inotify watches one call may hold (default 8192; host-wide per user: `fs.inotify.max_user_watches`). */
  maxInotifyWatches?: number;
  /**
   * Pseudo-terminals one call may open (default 16; 0: none). The host's non-initial devpts
   * instances share `kernel.pty.max` minus `kernel.pty.reserve` (3072 by default).
   */
  maxPseudoTerminals?: number;
  /** The fetch the parent's egress proxy performs admitted requests with (default `globalThis.fetch`). */
  fetch?: typeof fetch;
  /**
   * The host identity tools run as when this agent is root (default 65534:65534, `nobody`):
   * never root. The jail is given to it (chown) and `readPaths` must be readable by it. Only
   * for a root agent; any other agent's tools run as the agent.
   */
  sandboxUser?: SandboxUser;
  /**
   * Defences this host may lack that the operator accepts to run without, by name (default
   * none: a missing one is `sandbox_unavailable`). `identity`: a root agent's tools run as host
   * root; `seccomp`: no system call filter; `memory_cgroup`: no cgroup; `kernel_pools`: no
   * per-call bound on pseudo-terminals and inotify (one call can take what every sandbox
   * shares). Every call of a weakened sandbox records a `security_event` naming them;
   * {@link IsolatedProcessSandbox.configuration} shows them.
   */
  allowWeaker?: readonly WeakerMode[];
}

/**
 * Runs each call in a fresh child Node process inside a bubblewrap sandbox the kernel enforces:
 * its own user, PID, IPC, UTS and network namespaces (no nested user namespaces, no
 * capabilities, no new privileges, killed with the parent); the system directories, the Node
 * binary and the tool's bundle read-only; the jail read-write at the same path and a private
 * size-capped `/tmp` — nothing else writable, nothing else of the host visible (no `/home`,
 * `/var`, `/run`, `/etc`, host `/tmp`, host processes); an environment holding only the
 * allowlisted variables (secrets arrive on stdin). The network namespace has no interface but
 * its own loopback: a tool that declares `sandbox.networkAllowlist` reaches the network only
 * through the injected `http`, which talks to a proxy in this process over a Unix socket, and
 * the proxy applies the allowlists (see {@link EgressProxy}). The limits are those of
 * `LocalProcessSandbox`, measured over the whole process tree, plus `maxProcesses`.
 *
 * Tools declare `sandbox: { module: import.meta.url }`, as for `LocalProcessSandbox`: switching
 * is one line. Child processes are allowed (they are confined too).
 *
 * What a call costs the host is counted by a cgroup of its own (see {@link SandboxResources}):
 * `memoryMb` plus 128 MB of user and kernel memory together, `maxProcesses` tasks; what it
 * writes to the jail by a watchdog over the jail's file system and RLIMIT_FSIZE (`jailWriteMb`,
 * `jailWriteFiles`, see {@link JailDiskBudget}); its share of the host's pseudo-terminals and
 * inotify instances by namespaces of its own (`maxPseudoTerminals`, `maxInotifyInstances`,
 * `maxInotifyWatches`, see kernel-pools.ts).
 *
 * Needs Linux, bubblewrap 0.8+ and unprivileged user namespaces, util-linux `unshare` and
 * `mount` (unless `allowWeaker: ['kernel_pools']`) and a writable cgroup (unless
 * `allowWeaker: ['memory_cgroup']`); without them the constructor throws `sandbox_unavailable`
 * (check first with {@link IsolatedProcessSandbox.availability}).
 *
 * @example
 * const sandbox = new IsolatedProcessSandbox({ jailRoot: '/srv/agent-data', networkAllowlist: ['api.example.com'] });
 * await runTool(fetchReport, args, { sandbox });
 */
export class IsolatedProcessSandbox implements Sandbox {
  readonly kind = 'isolated_process';
  readonly #options: ResolvedProcessOptions;
  readonly #bwrap: Bubblewrap;
  readonly #maxProcesses: number;
  readonly #tmpMb: number;
  readonly #jailWriteMb: number;
  readonly #disk: JailDiskBudget;
  readonly #pools: KernelPoolLimits;
  readonly #fetch: typeof fetch | undefined;
  readonly #resources: SandboxResources;
  readonly #warm = new WarmChildren();
  readonly #proxies = new WeakMap<SandboxChild, EgressProxy>();
  readonly #user: SandboxUser | undefined;
  /** How this sandbox confines tools: host identity, seccomp, accepted weaker modes. */
  readonly configuration: Readonly<IsolatedConfiguration>;
  #runtime: string | undefined;
  #sockets = 0;

  /**
   * @throws VeridexError `sandbox_unavailable` without Linux, bubblewrap 0.8+ or user
   * namespaces; `config_invalid` for a missing jail or malformed allowlist.
   */
  constructor(options: IsolatedProcessSandboxOptions) {
    this.#options = resolveProcessOptions('IsolatedProcessSandbox', options);
    this.#jailWriteMb = whole('jailWriteMb', options.jailWriteMb ?? 256, 1);
    this.#disk = new JailDiskBudget(this.#options.jailRoot, {
      jailWriteMb: this.#jailWriteMb,
      jailWriteFiles: whole('jailWriteFiles', options.jailWriteFiles ?? 10_000, 1),
    });
    this.#pools = {
      inotifyInstances: whole('maxInotifyInstances', options.maxInotifyInstances ?? 8, 0),
      inotifyWatches: whole('maxInotifyWatches', options.maxInotifyWatches ?? 8192, 0),
      pseudoTerminals: whole('maxPseudoTerminals', options.maxPseudoTerminals ?? 16, 0),
    };
    const hardening = resolveHardening({
      bwrapPath: options.bwrapPath,
      sandboxUser: options.sandboxUser,
      allowWeaker: options.allowWeaker,
      jailRoot: this.#options.jailRoot,
      readPaths: this.#options.readPaths,
    });
    this.#bwrap = hardening.bwrap;
    this.#user = hardening.user;
    this.configuration = Object.freeze(hardening.configuration);
    this.#maxProcesses = options.maxProcesses ?? 64;
    this.#tmpMb = options.tmpMb ?? 64;
    this.#fetch = options.fetch;
    this.#resources = SandboxResources.resolve({
      allowWeaker: this.#options.allowWeaker,
      maxOpenFiles: options.maxOpenFiles ?? 128,
    });
    // Cgroups left by agents that were killed, or exited with a prewarmed sandbox waiting.
    this.#resources.removeStale();
  }

  /** What counts a call's cost: `cgroup_v2`, `cgroup_v1`, or `rlimit` (the weaker mode). */
  get resourceLimits(): SandboxResources['mode'] {
    return this.#resources.mode;
  }

  /**
   * Whether the sandbox can run here — bubblewrap, namespaces, and a writable cgroup unless
   * `allowWeaker` names `memory_cgroup` — and if not, why (the `sandbox_unavailable` message).
   */
  static availability(
    options: { bwrapPath?: string; allowWeaker?: readonly string[] } = {},
  ): { available: true } | { available: false; reason: string } {
    try {
      bubblewrap(options.bwrapPath);
      SandboxResources.resolve({ allowWeaker: options.allowWeaker ?? [], maxOpenFiles: 128 });
      return { available: true };
    } catch (error) {
      if (!VeridexError.is(error, 'sandbox_unavailable')) throw error;
      return { available: false, reason: error.message };
    }
  }

  async run(request: SandboxRunRequest): Promise<unknown> {
    const { tool } = request;
    const module = toolModule(tool, 'IsolatedProcessSandbox');
    request.signal.throwIfAborted();
    const notice = weakenedNotice(this.configuration);
    if (notice) request.onViolation(notice);
    const options = this.#options;
    const entry = this.#shared(
      await childEntryFor(module, childV8Flags(options), {
        startup: options.startup,
        variant: 'isolated',
        ...(options.cacheDirectory ? { cacheDirectory: options.cacheDirectory } : {}),
      }),
    );
    const allowlists = networkAllowlists(tool, options);
    // A host must be on every list: one empty list means no host at all, so no proxy either.
    const egress = allowlists.every((list) => list.length > 0) ? allowlists : undefined;
    const env = childEnvironment(options.envAllowlist, tool.sandbox?.envAllowlist);
    const key = JSON.stringify([entry.args, entry.readPaths, env, egress ?? null]);
    const start = () => this.#start(entry, env, egress);
    for (const notice of this.#resources.weakenedNotices()) request.onViolation(notice);
    // Nothing the tool left may carry a set-uid or set-gid bit when its call starts either: an
    // operator's set-gid directory would hand the bit to every directory the tool nests below
    // it, at any depth (a prewarmed child runs no tool code before this call drives it).
    const held = await sweepJail(options.jailRoot, request.onViolation);
    request.signal.throwIfAborted();
    const child = this.#warm.take(key, start);
    this.#proxies.get(child)?.attach({ report: request.onViolation, signal: request.signal });
    let response: Awaited<ReturnType<SandboxChild['drive']>>;
    try {
      response = await child.drive(
        childRequestFor(request, entry, options, {
          envNames: Object.keys(env),
          ...(egress ? { egressSocket: EGRESS_SOCKET } : {}),
        }),
        {
          ...options,
          maxProcesses: this.#maxProcesses,
          // Measured against what the jail held before the call (README "Sandboxes").
          disk: { bound: this.#disk.bound, begin: () => this.#disk.begin(held) },
        },
        request.signal,
        tool.name,
      );
    } finally {
      // Once its processes and its cgroup are gone, nothing it left may carry a set-uid or
      // set-gid bit.
      await child.exited;
      await sweepJail(options.jailRoot, request.onViolation);
      // The next call's sandbox starts now, after this one, so the two do not compete for CPU.
      if (options.prewarm) this.#warm.offer(key, start);
    }
    return settle(response, request);
  }

  /** The entry with its cached files readable by the sandbox user (the cache is root's, 0700). */
  #shared(entry: ChildEntry): ChildEntry {
    const user = this.#user;
    if (user === undefined || entry.mode === 'module') return entry;
    const swap = (path: string) => (entry.readPaths.includes(path) ? readableBy(path, user) : path);
    return { ...entry, args: entry.args.map(swap), readPaths: entry.readPaths.map(swap) };
  }

  /** Kills the sandboxes started ahead of time (with `prewarm`) and removes their sockets. */
  close(): void {
    this.#warm.close();
    if (this.#runtime) rmSync(this.#runtime, { recursive: true, force: true });
    this.#runtime = undefined;
  }

  #start(entry: ChildEntry, env: Record<string, string>, egress: string[][] | undefined) {
    const options = this.#options;
    const resources = this.#resources.forCall({
      memoryMb: options.memoryMb + RSS_HEADROOM_MB,
      maxProcesses: this.#maxProcesses,
      maxFileMb: this.#jailWriteMb,
    });
    let socket: string | undefined;
    let proxy: EgressProxy | undefined;
    if (egress) {
      // A private directory (mode 0700): no other local user can reach the proxy.
      this.#runtime ??= mkdtempSync(join(tmpdir(), 'veridex-isolated-'));
      socket = join(this.#runtime, `egress-${++this.#sockets}.sock`);
      proxy = EgressProxy.listen(socket, {
        allowlists: egress,
        allowHttp: options.allowHttp,
        ...(this.#fetch ? { fetch: this.#fetch } : {}),
      });
      if (this.#user) {
        // The sandbox user must reach its socket: the directory searchable (not listable), the
        // socket its own. No other socket lives there.
        chmodSync(this.#runtime, 0o711);
        chownSync(socket, this.#user.uid, this.#user.gid);
      }
    }
    const view = {
      jailRoot: options.jailRoot,
      readPaths: [...entry.readPaths, ...options.readPaths],
      tmpMb: this.#tmpMb,
      seccomp: this.configuration.seccomp,
      ...(socket ? { egressSocket: socket } : {}),
      ...(this.#bwrap.pools
        ? {
            pooled: {
              uid: this.configuration.hostUid,
              gid: this.configuration.hostGid,
              pseudoTerminals: this.#pools.pseudoTerminals,
            },
          }
        : {}),
    };
    // The call's own bounds on the host's shared pseudo-terminals and inotify (kernel-pools.ts);
    // absent only where the host cannot and `allowWeaker` names `kernel_pools`.
    const pools = this.#bwrap.pools ? poolsPrefix(this.#bwrap.pools, this.#pools) : [];
    const limit = this.#bwrap.prlimit
      ? [this.#bwrap.prlimit, `--nproc=${this.#maxProcesses}`, '--']
      : [];
    const node = [process.execPath, ...childV8Flags(options), '--no-warnings', ...entry.args];
    const [gate, ...gateArgs] = resources.prefix as [string, ...string[]];
    const child = SandboxChild.start({
      command: gate,
      args: [
        ...gateArgs,
        ...pools,
        this.#bwrap.path,
        ...sandboxArgs(view),
        '--',
        ...limit,
        ...node,
      ],
      env,
      cwd: options.jailRoot,
      ...(this.configuration.seccomp ? { inputs: [seccompProgram()] } : {}),
      ...(this.#user ? { user: this.#user } : {}),
      usage: readProcessTreeUsage,
      admit: resources.admit,
      oomKilled: resources.oomKilled,
      // Every isolated child waits for its call to start before any tool code runs: a bundle's
      // and a snapshot's first import, and the module entry's (isolated-child-main.ts), is
      // close-inherited-descriptors.ts, which blocks on the call-start byte.
      awaitsCallStart: true,
      // The call settles only once its cgroup is gone (see IsolatedProcessSandbox.run).
      onExit: () => {
        proxy?.close();
        if (socket) rmSync(socket, { force: true });
        return resources.release();
      },
    });
    if (proxy) this.#proxies.set(child, proxy);
    return child;
  }
}

/** `value` when it is a safe integer of at least `least`. @throws VeridexError `config_invalid`. */
function whole(name: string, value: number, least: number): number {
  if (!Number.isSafeInteger(value) || value < least) {
    throw new VeridexError(
      'config_invalid',
      `IsolatedProcessSandbox ${name} must be an integer of at least ${least}, got ${value}.`,
    );
  }
  return value;
}
