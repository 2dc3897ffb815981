import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CALL_CGROUP_NAME, type CgroupHost, removeCgroupDirectories } from './cgroup-limits.js';

/** How {@link removeStaleCgroups} tells whether an agent still runs (default: `/proc/<pid>`). */
export interface StaleCgroupOptions {
  alive?: (pid: number) => boolean;
  /** Youngest a cgroup may be to go, in ms (default 1,000): one being set up is left alone. */
  minimumAgeMs?: number;
}

/** Cgroups being retried by this process, so that two sweeps do not retry one twice. */
const pending = new Set<string>();
const RETRIES = 50;
const RETRY_MS = 100;

/**
 * Removes the per-call cgroups (`veridex-<pid>-…`) under `host` that an agent left behind: one
 * killed mid-call, or one that exited with a prewarmed sandbox waiting. Only the agent removes
 * its calls' cgroups, so those whose agent no longer runs would otherwise stay for good — each
 * leaked memory cgroup holds one of the host's 65,535 memory cgroup ids. A cgroup goes only
 * when its agent's pid is not running, it is at least `minimumAgeMs` old (one created a moment
 * ago by an agent of another PID namespace may not have its process yet) and it is empty (the
 * kernel refuses to remove one that holds a task). Busy or young ones are retried in the
 * background for about 5 s, on timers that do not keep this process alive.
 */
export function removeStaleCgroups(host: CgroupHost, options: StaleCgroupOptions = {}): void {
  const alive = options.alive ?? running;
  const minimumAgeMs = options.minimumAgeMs ?? 1_000;
  const parents = [host.memoryParent, ...(host.pidsParent ? [host.pidsParent] : [])];
  for (const parent of parents) {
    let names: string[];
    try {
      names = readdirSync(parent);
    } catch {
      continue;
    }
    for (const name of names) {
      const owner = CALL_CGROUP_NAME.exec(name)?.[1];
      if (owner === undefined || Number(owner) === process.pid || alive(Number(owner))) continue;
      const directory = join(parent, name);
      if (pending.has(directory)) continue;
      pending.add(directory);
      retry(directory, minimumAgeMs, 0);
    }
  }
}

function retry(directory: string, minimumAgeMs: number, attempt: number): void {
  let done: boolean;
  try {
    const age = Date.now() - statSync(directory).ctimeMs;
    done = age >= minimumAgeMs && removeCgroupDirectories([directory]).length === 0;
  } catch {
    done = true; // gone already
  }
  if (done || attempt >= RETRIES) {
    pending.delete(directory);
    return;
  }
  setTimeout(() => retry(directory, minimumAgeMs, attempt + 1), RETRY_MS).unref();
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
