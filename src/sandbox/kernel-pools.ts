// Per-call bounds on kernel pools that no cgroup counts and that every sandbox of the host shares
// (README "Sandboxes", "Kernel pools"): pseudo-terminals (`kernel.pty.max` minus
// `kernel.pty.reserve`, shared by every non-initial devpts instance) and inotify instances and
// watches (`fs.inotify.max_user_instances` / `max_user_watches`, counted per host user, and every
// sandbox of a root agent runs as the same one).
//
// The mechanism: each call's bubblewrap starts inside a user and mount namespace of its own
// (`unshare`, as the sandbox user mapped to root there), where a short shell
// - lowers `user.max_inotify_instances` and `user.max_inotify_watches` of that namespace. The
//   kernel charges an instance or watch to every user namespace up to the initial one and
//   refuses it when any level is full (kernel/ucount.c, inc_ucount), so the call's tools —
//   in bubblewrap's namespace below this one — hold at most this many, whatever their own
//   namespace's limit says;
// - mounts a devpts instance of its own with `max=` (Documentation/filesystems/devpts.rst), which
//   bubblewrap binds as the sandbox's `/dev/pts` (its `--dev` would mount an unbounded one);
// then execs bubblewrap, which drops every capability as before. Only the namespaced sysctls of
// that namespace and its own mounts are changed; nothing of the host.
import { accessSync, constants, statSync } from 'node:fs';

/** How many of each shared kernel pool one call may hold. */
export interface KernelPoolLimits {
  inotifyInstances: number;
  inotifyWatches: number;
  pseudoTerminals: number;
}

/** The host programs the pools layer runs (util-linux). */
export interface PoolTools {
  unshare: string;
  mount: string;
}

const SETUP = [
  'echo "$1" > /proc/sys/user/max_inotify_instances || exit 126',
  'echo "$2" > /proc/sys/user/max_inotify_watches || exit 126',
  // ptmxmode 0666 and mode 620: bubblewrap's own devpts options. None at all for 0: devpts
  // reads `max=0` as no bound (it allocates indexes up to max - 1, unsigned).
  '[ "$3" = 0 ] || "$4" -t devpts -o "newinstance,ptmxmode=0666,mode=620,max=$3" devpts /dev/pts || exit 126',
  'shift 4',
  'exec "$@"',
].join('; ');

/** `unshare` and `mount` where util-linux puts them, or undefined when either is missing. */
export function findPoolTools(): PoolTools | undefined {
  const find = (name: string) =>
    [`/usr/bin/${name}`, `/bin/${name}`, `/usr/sbin/${name}`, `/sbin/${name}`].find(executable);
  const unshare = find('unshare');
  const mount = find('mount');
  return unshare && mount ? { unshare, mount } : undefined;
}

/** The command that sets the call's pools up and then runs the one that follows it (bubblewrap). */
export function poolsPrefix(tools: PoolTools, limits: KernelPoolLimits): string[] {
  return [
    tools.unshare,
    '--user',
    '--map-root-user',
    '--mount',
    '--propagation',
    'private',
    '/bin/sh',
    '-c',
    SETUP,
    'veridex-pools',
    String(limits.inotifyInstances),
    String(limits.inotifyWatches),
    String(limits.pseudoTerminals),
    tools.mount,
  ];
}

/**
 * bubblewrap arguments for `/dev` with the pools layer: what its `--dev` builds (the host's
 * null, zero, full, random, urandom and tty nodes; the standard descriptor links; `shm`),
 * but with the call's own bounded devpts at `/dev/pts` instead of an unbounded one (none, and
 * no `/dev/ptmx`, for 0 terminals). And, as bubblewrap now runs as root of the pools
 * namespace, the host identity the tool had before (`uid`, `gid`), so the tool sees the same ids.
 */
export function privateDevArgs(identity: {
  uid: number;
  gid: number;
  pseudoTerminals: number;
}): string[] {
  const args = ['--uid', String(identity.uid), '--gid', String(identity.gid), '--tmpfs', '/dev'];
  for (const node of ['null', 'zero', 'full', 'random', 'urandom', 'tty']) {
    args.push('--dev-bind', `/dev/${node}`, `/dev/${node}`);
  }
  ['stdin', 'stdout', 'stderr'].forEach((name, fd) => {
    args.push('--symlink', `/proc/self/fd/${fd}`, `/dev/${name}`);
  });
  args.push('--symlink', '/proc/self/fd', '/dev/fd', '--dir', '/dev/shm');
  if (identity.pseudoTerminals > 0) {
    args.push('--dev-bind', '/dev/pts', '/dev/pts', '--symlink', 'pts/ptmx', '/dev/ptmx');
  }
  return args;
}

/** Whether `path` is a regular file this process may execute. */
export function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
