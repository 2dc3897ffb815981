import { readFileSync } from 'node:fs';

/** CPU time and resident memory of a running process. */
export interface ProcessUsage {
  cpuMs: number;
  rssMb: number;
}

// Linux reports CPU in clock ticks (USER_HZ, 100 on every mainstream kernel) and memory in
// pages (4 KiB on x86-64 and most arm64 builds).
const TICK_MS = 10;
const PAGE_MB = 4096 / (1024 * 1024);

/**
 * Reads `pid`'s CPU time (user + system) and resident set size from `/proc`. Returns
 * `undefined` where `/proc` does not exist (macOS, Windows) or the process is gone; limits
 * that depend on it then fall back to the wall-clock timeout and V8's heap limit.
 */
export function readProcessUsage(pid: number): ProcessUsage | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    const statm = readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ');
    return { cpuMs: ticks * TICK_MS, rssMb: Number(statm[1]) * PAGE_MB };
  } catch {
    return undefined;
  }
}
