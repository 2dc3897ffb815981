// Adversary 2 (a hostile tool author) against IsolatedProcessSandbox: the jail is a bind mount of
// a host directory, read-write, and nothing bounds what a call puts there.
// - Disk: `tmpMb` caps the private /tmp and the cgroup caps memory, but the jail sits on the
//   host's file system with no quota: a call limited to 64 MB of memory and 16 MB of /tmp writes
//   1 GiB there in under a second (and can go on until the host's disk is full, for every user
//   of that file system; seen here: the jail is on the host's root file system).
// - Inodes, and the agent's event loop: before and after every call the parent walks the whole
//   jail synchronously (`sweepJail`, set-id bits), so a tool that leaves a few hundred thousand
//   empty files makes every later call block the agent's event loop — every other thread, tool
//   call, timer and HTTP request of the agent — for seconds, twice. The README says the sweep's
//   cost grows with the jail's size; it does not say the tool decides that size.
// Fixed (README "Sandboxes"): each call may take `jailWriteMb` (256) of the jail's file system
// and `jailWriteFiles` (10,000) inodes — a watchdog on the file system's figures, and
// RLIMIT_FSIZE for any one file — beyond which it is stopped (`details.limit: 'disk'`); the
// set-id sweep yields to the event loop every few milliseconds, whatever the jail holds.
import { closeSync, mkdirSync, openSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { IsolatedProcessSandbox } from '../../src/sandbox/index.js';
import { attackJail, runHostileTool } from '../support/attack-targets.js';
import { describeIsolated } from '../support/isolation.js';
import { fillFile, manyFiles, shell } from './fixtures/repass-probe-tools.js';

const { base, jail } = attackJail('veridex-repass-jail-');
afterAll(() => rmSync(base, { recursive: true, force: true }));

describeIsolated('a hostile tool against the jail it writes to', () => {
  it('cannot write more to the host disk than its limits allow (memoryMb 64, tmpMb 16)', async () => {
    const box = new IsolatedProcessSandbox({
      jailRoot: jail,
      memoryMb: 64,
      tmpMb: 16,
      timeoutMs: 120_000,
      cpuMs: 120_000,
    });
    const file = join(jail, 'fill.bin');
    try {
      const { result } = await runHostileTool(box, fillFile, { file, megabytes: 768 });
      const onDisk = (statSync(file, { throwIfNoEntry: false })?.size ?? 0) / (1024 * 1024);
      // Secure: a per-call (or per-jail) disk bound stops it — a limit error or ENOSPC/EDQUOT —
      // well below 512 MiB. Today: all 768 MiB are written.
      expect(onDisk, JSON.stringify(result)).toBeLessThan(512);
      expect(JSON.stringify(result)).not.toMatch(/"limit":"(cpu|time|memory)"/);
      // One file meets the kernel's bound first (RLIMIT_FSIZE: the write fails with EFBIG, which
      // the tool sees); past it, the watchdog stops the call.
      expect(JSON.stringify(result)).toMatch(/EFBIG|"limit":"disk"/);
    } finally {
      box.close();
      rmSync(file, { force: true });
    }
  }, 180_000);

  it('cannot make the next call block the agent for seconds by leaving many files in the jail', async () => {
    const box = new IsolatedProcessSandbox({ jailRoot: jail, timeoutMs: 170_000, cpuMs: 170_000 });
    const directory = join(jail, 'many');
    const count = 300_000;
    try {
      const { result } = await runHostileTool(box, manyFiles, { directory, count });
      const output = (result as { output?: { result: string } }).output;
      const made = output ? (JSON.parse(output.result) as { made: number }).made : 0;
      if (made < count) {
        // A bound on the jail (its files or bytes) that stopped the flood is a fix too; nothing
        // else may (the CPU and time limits are set out of its way).
        expect(JSON.stringify(result)).toMatch(/EDQUOT|ENOSPC|"limit":"(disk|files?)"/);
        return;
      }
      // The next call, of an innocent tool: how long is the agent's event loop held at once?
      let worst = 0;
      let last = performance.now();
      const ticker = setInterval(() => {
        const now = performance.now();
        worst = Math.max(worst, now - last - 10);
        last = now;
      }, 10);
      try {
        const next = await runHostileTool(box, shell, 'true');
        expect(next.result).toMatchObject({ status: 'success' });
      } finally {
        clearInterval(ticker);
      }
      // Today: ~2–3 s at once (the sweep before the call; again after it). A loaded machine
      // stalls a timer by far less than a second.
      expect(worst, 'longest stall of the agent event loop (ms)').toBeLessThan(1_000);
    } finally {
      box.close();
      rmSync(directory, { recursive: true, force: true });
    }
  }, 300_000);

  it('cannot get past the bound by spreading its writes over several files, each under it', async () => {
    const box = new IsolatedProcessSandbox({
      jailRoot: jail,
      jailWriteMb: 64,
      timeoutMs: 120_000,
      cpuMs: 120_000,
    });
    const directory = join(jail, 'spread');
    try {
      // Eight files of 48 MiB: each under the 64 MiB bound (and RLIMIT_FSIZE), 384 MiB in all.
      const { result } = await runHostileTool(
        box,
        shell,
        `mkdir -p ${directory} && for i in 1 2 3 4 5 6 7 8; do head -c 50331648 /dev/zero > ${directory}/part-$i || exit 1; done; echo done`,
      );
      let onDisk = 0;
      for (const name of readdirSync(directory)) onDisk += statSync(join(directory, name)).size;
      // The watchdog polls every 20 ms: what one poll lets through at this disk's speed, beside
      // the bound.
      expect(onDisk / (1024 * 1024), JSON.stringify(result)).toBeLessThan(64 + 96);
      expect(result).toMatchObject({
        status: 'error',
        error: { code: 'sandbox_limit_exceeded', details: { limit: 'disk' } },
      });
    } finally {
      box.close();
      rmSync(directory, { recursive: true, force: true });
    }
  }, 180_000);

  it('does not hold the agent event loop for long when the jail already holds many files', async () => {
    // However they got there (many calls, each within its bound, or the operator): the set-id
    // sweep before and after a call walks them all, in slices.
    const directory = join(jail, 'left');
    mkdirSync(directory);
    for (let made = 0; made < 300_000; made++)
      closeSync(openSync(join(directory, `f${made}`), 'w'));
    const box = new IsolatedProcessSandbox({ jailRoot: jail });
    let worst = 0;
    let last = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      worst = Math.max(worst, now - last - 10);
      last = now;
    }, 10);
    try {
      const next = await runHostileTool(box, shell, 'true');
      expect(next.result).toMatchObject({ status: 'success' });
    } finally {
      clearInterval(ticker);
      box.close();
      rmSync(directory, { recursive: true, force: true });
    }
    // Synchronous, this was ~2–3 s at once, twice.
    expect(worst, 'longest stall of the agent event loop (ms)').toBeLessThan(500);
  }, 300_000);
});
