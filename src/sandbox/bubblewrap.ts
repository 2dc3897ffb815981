import { spawnSync } from 'node:child_process';
import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { VeridexError } from '../errors/index.js';
import {
  executable,
  findPoolTools,
  type PoolTools,
  poolsPrefix,
  privateDevArgs,
} from './kernel-pools.js';
import type { SandboxUser } from './sandbox-identity.js';
import { tryPrefixed, trySandbox } from './sandbox-trial.js';
import { seccompArchitectureSupported } from './seccomp-filter.js';

/** Where the egress proxy socket appears inside the sandbox. */
export const EGRESS_SOCKET = '/run/veridex/egress.sock';
/** The descriptor bubblewrap reads the seccomp filter from (`--seccomp 4`): the child's first input. */
export const SECCOMP_FD = 4;
const SYSTEM = ['/usr', '/bin', '/sbin', '/lib', '/lib64', '/lib32', '/libx32'];
const INSTALL =
  'Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap)';

/** A bubblewrap that was found and proven to create the namespaces we need. */
export interface Bubblewrap {
  path: string;
  /** `prlimit` (util-linux) inside the sandbox's view of the system, when present. */
  prlimit?: string;
  /** Why the seccomp filter cannot be applied here; absent when it can. */
  seccompUnavailable?: string;
  /** Why a sandbox cannot start as the requested unprivileged user here; absent when it can. */
  identityUnavailable?: string;
  /** The programs of the kernel pools layer (kernel-pools.ts), when it works here. */
  pools?: PoolTools;
  /** Why the kernel pools layer cannot run here; absent when it can. */
  poolsUnavailable?: string;
}

const probes = new Map<string, Bubblewrap | VeridexError>();

/**
 * Finds bubblewrap (`bwrapPath`, else `bwrap` on PATH), checks it is 0.8 or newer and proves,
 * by starting a sandbox once per process, that this kernel lets it create user, PID, IPC, UTS
 * and network namespaces — as `user` when given, under the seccomp filter — and says which of
 * those two it could not do.
 * @throws VeridexError `sandbox_unavailable` saying what to install or enable.
 */
export function bubblewrap(bwrapPath?: string, user?: SandboxUser): Bubblewrap {
  const key = `${bwrapPath ?? ''}\0${user ? `${user.uid}:${user.gid}` : ''}`;
  let probe = probes.get(key);
  if (probe === undefined) {
    probe = probeBubblewrap(bwrapPath, user);
    probes.set(key, probe);
  }
  if (probe instanceof VeridexError) throw probe;
  return probe;
}

function probeBubblewrap(
  bwrapPath: string | undefined,
  user: SandboxUser | undefined,
): Bubblewrap | VeridexError {
  if (process.platform !== 'linux') {
    return unavailable(
      `it needs Linux namespaces, and this is ${process.platform}. Run the agent in a Linux VM or container that allows user namespaces, or use LocalProcessSandbox knowing it is not a boundary for hostile code`,
    );
  }
  const path = bwrapPath ?? onPath('bwrap');
  if (path === undefined || !executable(path)) {
    return unavailable(
      `bubblewrap (bwrap) was not found${bwrapPath ? ` at ${bwrapPath}` : ' on PATH'}. ${INSTALL}`,
    );
  }
  const help = spawnSync(path, ['--help'], { encoding: 'utf8', env: {}, timeout: 10_000 });
  if (!/--disable-userns/.test(help.stdout ?? '') || !/--size/.test(help.stdout ?? '')) {
    return unavailable(
      `${path} is not bubblewrap 0.8 or newer (it lacks --disable-userns and --size). ${INSTALL}, version 0.8+`,
    );
  }
  const trialArgs = [...NAMESPACES, ...systemMounts()];
  const hasSeccomp = /--seccomp/.test(help.stdout ?? '') && seccompArchitectureSupported();
  const tried = trySandbox(path, trialArgs, { user, seccomp: hasSeccomp });
  const said = tried.refused;
  if (said !== undefined) {
    return unavailable(
      `bubblewrap could not create a sandbox here (${said}). Unprivileged user namespaces may be disabled: enable them (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04+ kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap), or run the container with user namespaces allowed`,
    );
  }
  const prlimit = ['/usr/bin/prlimit', '/bin/prlimit'].find(executable);
  const pools = probePools(path, trialArgs, tried.identityRefused === undefined ? user : undefined);
  return {
    path,
    ...(prlimit ? { prlimit } : {}),
    ...pools,
    ...(hasSeccomp
      ? tried.seccompRefused === undefined
        ? {}
        : { seccompUnavailable: `the kernel refused the filter (${tried.seccompRefused})` }
      : {
          seccompUnavailable: seccompArchitectureSupported()
            ? `${path} has no --seccomp option`
            : `the filter knows x86_64 and aarch64, and this is ${process.arch}`,
        }),
    ...(tried.identityRefused === undefined
      ? {}
      : {
          identityUnavailable: `bubblewrap could not start as uid ${user?.uid} (${tried.identityRefused}); this kernel may allow user namespaces to root only`,
        }),
  };
}

/**
 * Starts the trial sandbox once behind the kernel pools layer, as the sandbox will run (as
 * `user`, bubblewrap mapping the tool back to that identity).
 */
function probePools(
  path: string,
  trialArgs: readonly string[],
  user: SandboxUser | undefined,
): { pools: PoolTools } | { poolsUnavailable: string } {
  const tools = findPoolTools();
  if (tools === undefined) {
    return { poolsUnavailable: 'util-linux unshare or mount was not found in /usr/bin or /bin' };
  }
  const identity = user ?? { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
  const limits = { inotifyInstances: 1, inotifyWatches: 1, pseudoTerminals: 1 };
  const refused = tryPrefixed(
    path,
    [...trialArgs, ...privateDevArgs({ ...identity, pseudoTerminals: 1 })],
    poolsPrefix(tools, limits),
    user,
  );
  return refused === undefined
    ? { pools: tools }
    : { poolsUnavailable: `a sandbox behind its own user namespace did not start (${refused})` };
}

function unavailable(why: string): VeridexError {
  return new VeridexError('sandbox_unavailable', `IsolatedProcessSandbox is unavailable: ${why}.`);
}

// Own PID, IPC, UTS, network and user namespaces (and cgroup, where the kernel has it); no
// nested user namespaces; killed with its parent; a new session (no TIOCSTI into our terminal);
// no capabilities. bubblewrap always sets no_new_privs, so set-uid binaries gain nothing.
const NAMESPACES = [
  '--unshare-user',
  '--unshare-pid',
  '--unshare-ipc',
  '--unshare-uts',
  '--unshare-net',
  '--unshare-cgroup-try',
  '--disable-userns',
  '--die-with-parent',
  '--new-session',
  '--cap-drop',
  'ALL',
];

/** What one sandboxed child sees. */
export interface SandboxView {
  /** Bound read-write at the same path; the working directory. */
  jailRoot: string;
  /** Bound read-only at the same paths (the tool's bundle, `readPaths`). */
  readPaths: readonly string[];
  /** Host path of the egress proxy socket, bound at {@link EGRESS_SOCKET}. */
  egressSocket?: string;
  /** Size of the private /tmp (a tmpfs), in MB. */
  tmpMb: number;
  /** Apply the seccomp filter the child reads from {@link SECCOMP_FD}. */
  seccomp?: boolean;
  /**
   * The host identity of the tool, when bubblewrap runs behind the kernel pools layer: `/dev`
   * then holds the call's own bounded devpts (see kernel-pools.ts) instead of `--dev`'s.
   */
  pooled?: { uid: number; gid: number; pseudoTerminals: number };
}

/**
 * bubblewrap arguments for one child: the namespaces above; the system directories and this
 * Node binary read-only; a fresh /proc (this PID namespace only) and a minimal /dev (with a
 * bounded devpts of its own behind the kernel pools layer); a private,
 * size-capped /tmp; the tool's files read-only; the jail read-write; then the root and /dev
 * made read-only, so the jail and /tmp are the only writable paths.
 */
export function sandboxArgs(view: SandboxView): string[] {
  const args = [...NAMESPACES, '--hostname', 'veridex-sandbox', ...systemMounts()];
  args.push('--ro-bind-try', '/etc/ld.so.cache', '/etc/ld.so.cache');
  // /proc/sys read-only: sysctls such as kernel.core_pattern are the host's, whatever namespace
  // the writer is in. /sys is not mounted at all.
  args.push('--proc', '/proc', '--ro-bind', '/proc/sys', '/proc/sys');
  args.push(...(view.pooled ? privateDevArgs(view.pooled) : ['--dev', '/dev']));
  args.push('--size', String(view.tmpMb * 1024 * 1024), '--tmpfs', '/tmp');
  for (const path of view.readPaths) args.push('--ro-bind', path, path);
  args.push('--bind', view.jailRoot, view.jailRoot);
  if (view.egressSocket) args.push('--bind', view.egressSocket, EGRESS_SOCKET);
  args.push('--remount-ro', '/dev', '--remount-ro', '/', '--chdir', view.jailRoot);
  if (view.seccomp) args.push('--seccomp', String(SECCOMP_FD));
  return args;
}

/** The system directories and this Node binary, read-only. */
export function systemMounts(): string[] {
  const args: string[] = [];
  for (const directory of SYSTEM) {
    const stat = lstatSync(directory, { throwIfNoEntry: false });
    if (stat?.isSymbolicLink()) args.push('--symlink', readlinkSync(directory), directory);
    else if (stat?.isDirectory()) args.push('--ro-bind', directory, directory);
  }
  // This Node binary, where it lives outside the system directories (nvm, a tarball).
  const node = realpathSync(process.execPath);
  if (!SYSTEM.some((directory) => node.startsWith(`${directory}/`))) {
    args.push('--ro-bind', node, process.execPath);
  }
  return args;
}

function onPath(name: string): string | undefined {
  for (const directory of (process.env.PATH ?? '').split(delimiter)) {
    if (!isAbsolute(directory)) continue;
    const candidate = join(directory, name);
    if (executable(candidate)) return candidate;
  }
  return undefined;
}
