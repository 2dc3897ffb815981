// The root-in-a-container defences of IsolatedProcessSandbox, decided once per sandbox (README
// "Sandboxes", threat model adversary 9): which host user runs the tool, whether the seccomp
// filter applies, and which weaker mode the operator accepted by name.
import { VeridexError } from '../errors/index.js';
import { type Bubblewrap, bubblewrap } from './bubblewrap.js';
import { giveJailTo } from './jail-ownership.js';
import { emptyUsage, type JailUsage, stripSetIdBitsInSlices } from './jail-sweep.js';
import type { SandboxViolation } from './sandbox.js';
import { requireReachable, type SandboxUser, sandboxUserFor } from './sandbox-identity.js';

/**
 * A defence an operator may run without, by naming it in `allowWeaker`: `identity` (a root
 * agent's sandbox runs as host root), `seccomp` (no system call filter), `memory_cgroup` (no
 * cgroup: memory and processes only watchdog-polled, descriptors capped), `kernel_pools` (no
 * per-call bound on pseudo-terminals and inotify: one call can take the host's shared pools).
 */
export type WeakerMode = 'identity' | 'seccomp' | 'memory_cgroup' | 'kernel_pools';

/** How one IsolatedProcessSandbox confines its tools; shown by `IsolatedProcessSandbox.configuration`. */
export interface IsolatedConfiguration {
  /** The host uid and gid the tool runs as (this process's own when it is not root). */
  hostUid: number;
  hostGid: number;
  /** Whether the seccomp filter applies. */
  seccomp: boolean;
  /** The defences missing here that the operator accepted with `allowWeaker`. */
  weakened: WeakerMode[];
}

/** What {@link resolveHardening} decided. */
export interface Hardening {
  bwrap: Bubblewrap;
  user: SandboxUser | undefined;
  configuration: IsolatedConfiguration;
}

// `memory_cgroup` is decided by SandboxResources (cgroup-limits.ts); it is named here so one
// `allowWeaker` list serves both and a typo in it is refused.
const WEAKER_MODES: readonly WeakerMode[] = [
  'identity',
  'seccomp',
  'memory_cgroup',
  'kernel_pools',
];

/** What each weaker mode of this file leaves undone, for the refusal. */
const CANNOT: Record<'identity' | 'seccomp' | 'kernel_pools', (user?: SandboxUser) => string> = {
  identity: (user) => `run tools as the unprivileged uid ${user?.uid} (this agent is root)`,
  seccomp: () => 'apply its seccomp filter',
  kernel_pools: () =>
    "bound each call's pseudo-terminals and inotify instances (kernel pools every sandbox shares)",
};

/**
 * Probes bubblewrap as the sandbox user with the filter and decides. When the agent is root,
 * the jail is handed to the sandbox user (see `giveJailTo`) and `readPaths` checked readable.
 * @throws VeridexError `sandbox_unavailable` when a defence cannot run here and `allowWeaker`
 * does not name it; `config_invalid` for an unknown weaker mode, a bad `sandboxUser`, or a jail
 * or read path the sandbox user cannot reach.
 */
export function resolveHardening(options: {
  bwrapPath: string | undefined;
  sandboxUser: SandboxUser | undefined;
  allowWeaker: readonly string[] | undefined;
  jailRoot: string;
  readPaths: readonly string[];
}): Hardening {
  const allowed = new Set<WeakerMode>();
  for (const mode of options.allowWeaker ?? []) {
    if (!(WEAKER_MODES as readonly string[]).includes(mode)) {
      throw new VeridexError(
        'config_invalid',
        `IsolatedProcessSandbox allowWeaker names "${mode}"; the weaker modes are ${WEAKER_MODES.join(', ')}.`,
      );
    }
    allowed.add(mode as WeakerMode);
  }
  let user = sandboxUserFor(options.sandboxUser);
  const bwrap = bubblewrap(options.bwrapPath, user);
  const weakened: WeakerMode[] = [];
  const missing: Array<['identity' | 'seccomp' | 'kernel_pools', string | undefined]> = [
    ['identity', bwrap.identityUnavailable],
    ['seccomp', bwrap.seccompUnavailable],
    ['kernel_pools', bwrap.poolsUnavailable],
  ];
  for (const [mode, why] of missing) {
    if (why === undefined) continue;
    if (!allowed.has(mode)) {
      throw new VeridexError(
        'sandbox_unavailable',
        `IsolatedProcessSandbox cannot ${CANNOT[mode](user)} here: ${why}. Fix the host, or accept the weaker sandbox by name with allowWeaker: ['${mode}'] (recorded in the audit log on every call).`,
        { details: { missing: mode } },
      );
    }
    weakened.push(mode);
    if (mode === 'identity') user = undefined;
  }
  if (user) {
    // The jail itself becomes the user's below; the directories above it must let it through.
    requireReachable('jailRoot', [options.jailRoot], user, { readable: false });
    requireReachable('readPaths', options.readPaths, user);
    giveJailTo(options.jailRoot, user);
  }
  return {
    bwrap,
    user,
    configuration: {
      hostUid: user?.uid ?? process.getuid?.() ?? -1,
      hostGid: user?.gid ?? process.getgid?.() ?? -1,
      seccomp: bwrap.seccompUnavailable === undefined,
      weakened,
    },
  };
}

/** The violation recorded on every call of a weakened sandbox, so the audit log shows it. */
export function weakenedNotice(configuration: IsolatedConfiguration): SandboxViolation | undefined {
  if (configuration.weakened.length === 0) return undefined;
  return {
    capability: 'process',
    target: 'sandbox',
    reason: `IsolatedProcessSandbox runs weaker, accepted with allowWeaker: ${configuration.weakened.join(', ')}`,
  };
}

/**
 * Before and after a call (its processes gone): strips set-uid and set-gid bits in the jail and
 * reports each file as a violation (the call's record keeps them bounded and counted). The walk
 * yields to the event loop every few milliseconds (see jail-sweep.ts): the tool decides how
 * many files the jail holds, so the agent's other work must not wait on it.
 */
export async function sweepJail(
  jailRoot: string,
  report: (violation: SandboxViolation) => void,
): Promise<JailUsage> {
  const usage = emptyUsage();
  for (const path of await stripSetIdBitsInSlices(jailRoot, usage)) {
    report({
      capability: 'fs',
      target: path,
      reason: 'a set-uid or set-gid bit was left in the jail; it was removed',
    });
  }
  return usage;
}
