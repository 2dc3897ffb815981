import { readdirSync, readFileSync } from 'node:fs';

/** CPU time, resident memory and task count of a running process (or process tree). */
export interface ProcessUsage {
  cpuMs: number;
  rssMb: number;
  /** Threads, counted as the kernel counts them for RLIMIT_NPROC. */
  tasks: number;
}

// Linux reports CPU in clock ticks (USER_HZ, 100 on every mainstream kernel) and memory in
// pages (4 KiB on x86-64 and most arm64 builds).
const TICK_MS = 10;
const PAGE_MB = 4096 / (1024 * 1024);
// A tree larger than this is a fork bomb whatever the limit; stop walking, report what we saw.
const MAX_WALK = 4096;

/**
 * Reads `pid`'s CPU time (user + system, plus that of children it has reaped), resident set
 * size and thread count from `/proc`. Returns `undefined` where `/proc` does not exist (macOS,
 * Windows) or the process is gone; limits that depend on it then fall back to the wall-clock
 * timeout and V8's heap limit.
 */
export function readProcessUsage(pid: number): ProcessUsage | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    const statm = readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ');
    return { cpuMs: ticks * TICK_MS, rssMb: Number(statm[1]) * PAGE_MB, tasks: Number(fields[17]) };
  } catch {
    return undefined;
  }
}

/**
 * {@link readProcessUsage} summed over `pid` and all its descendants (found through
 * `/proc/<pid>/task/<tid>/children`): what a sandbox whose tool may start processes must limit.
 * Processes that exited and were reaped count through their parent's children-CPU fields.
 */
export function readProcessTreeUsage(pid: number): ProcessUsage | undefined {
  const root = readProcessUsage(pid);
  if (root === undefined) return undefined;
  const total = { ...root };
  const pending = childrenOf(pid);
  for (let seen = 0; pending.length > 0 && seen < MAX_WALK; seen++) {
    const next = pending.pop()!;
    const usage = readProcessUsage(next);
    if (usage === undefined) continue;
    total.cpuMs += usage.cpuMs;
    total.rssMb += usage.rssMb;
    total.tasks += usage.tasks;
    pending.push(...childrenOf(next));
  }
  if (pending.length > 0) total.tasks += pending.length;
  return total;
}

function childrenOf(pid: number): number[] {
  const found: number[] = [];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      if (text !== '') for (const child of text.split(' ')) found.push(Number(child));
    }
  } catch {
    // Gone, or a kernel without CONFIG_PROC_CHILDREN: count what we could see.
  }
  return found;
}
