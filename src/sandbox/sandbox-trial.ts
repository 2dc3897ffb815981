// Starting one throw-away bubblewrap sandbox to learn what this host allows: whether the
// namespaces work at all, whether they work for the sandbox's unprivileged user, and whether the
// kernel takes the seccomp filter. Run once per process (see bubblewrap.ts).
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxUser } from './sandbox-identity.js';
import { seccompProgram } from './seccomp-filter.js';

/** What a trial found; every field absent means all worked. */
export interface SandboxTrial {
  /** Why no sandbox could start at all. */
  refused?: string;
  /** Why the filter was refused (the sandbox starts without it). */
  seccompRefused?: string;
  /** Why the sandbox could not start as the unprivileged user (it starts as the agent). */
  identityRefused?: string;
}

/**
 * Runs `node --version` under bubblewrap with `args` (namespaces and mounts), as `user` and with
 * the seccomp filter when asked; when that fails, tries without each to say which was refused.
 */
export function trySandbox(
  bwrap: string,
  args: readonly string[],
  options: { user: SandboxUser | undefined; seccomp: boolean },
): SandboxTrial {
  const { user, seccomp } = options;
  if (run(bwrap, args, user, seccomp) === undefined) return {};
  const bare = run(bwrap, args, undefined, false);
  if (bare !== undefined) return { refused: bare };
  const asUser = user ? run(bwrap, args, user, false) : undefined;
  const filtered = seccomp ? run(bwrap, args, undefined, true) : undefined;
  return {
    ...(asUser !== undefined ? { identityRefused: asUser } : {}),
    ...(filtered !== undefined ? { seccompRefused: filtered } : {}),
  };
}

/**
 * Runs the trial sandbox behind `prefix` (the kernel pools layer, see kernel-pools.ts), as
 * `user`; undefined when it ran, else what went wrong.
 */
export function tryPrefixed(
  bwrap: string,
  args: readonly string[],
  prefix: readonly string[],
  user: SandboxUser | undefined,
): string | undefined {
  return run(bwrap, args, user, false, prefix);
}

/** Undefined when the trial sandbox ran; else what went wrong. */
function run(
  bwrap: string,
  args: readonly string[],
  user: SandboxUser | undefined,
  seccomp: boolean,
  prefix: readonly string[] = [],
): string | undefined {
  let fd: number | undefined;
  if (seccomp) {
    const directory = mkdtempSync(join(tmpdir(), 'veridex-seccomp-'));
    const file = join(directory, 'filter.bpf');
    writeFileSync(file, seccompProgram(), { mode: 0o600 });
    fd = openSync(file, 'r');
    rmSync(directory, { recursive: true, force: true });
  }
  try {
    const command = [
      ...prefix,
      bwrap,
      ...args,
      ...(seccomp ? ['--seccomp', '4'] : []),
      '--',
      process.execPath,
      '--version',
    ];
    const trial = spawnSync(command[0]!, command.slice(1), {
      encoding: 'utf8',
      env: {},
      timeout: 30_000,
      stdio: ['ignore', 'pipe', 'pipe', 'ignore', fd ?? 'ignore'],
      ...(user ? { uid: user.uid, gid: user.gid } : {}),
    });
    if (trial.status === 0) return undefined;
    return (trial.stderr || trial.error?.message || `exit ${trial.status}`).trim();
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
