// Adversary 2 (a hostile tool author) against IsolatedProcessSandbox's jail disk bound
// (`jailWriteMb`). The kernel bounds each file (RLIMIT_FSIZE = `jailWriteMb`) and the parent's
// watchdog reads the jail's file system every 20 ms; the README (and OPEN-ATTACKS.md) say a burst
// between two polls passes "tens of MB at this disk's speed". That is the speed of writing data.
// `fallocate(2)` reserves blocks without writing them: on ext4 a file of the full per-file bound
// is allocated in about a millisecond, and a tool may run `maxProcesses` (64) of them at once.
//
// Steps: with `jailWriteMb: 64`, the tool's shell starts 60 `fallocate -l 63M f$i &` at once
// (each file within RLIMIT_FSIZE) and waits. The watchdog does stop the call (`disk`), but by
// then the allocations are done and they stay in the jail: ~3.3 GB (52x the bound) seen here,
// on the host's root file system. With the defaults (256 MB, 64 processes) one call takes ~16 GB;
// every further call as much again. (Sixty parallel `dd` writes take only ~111 MB: it is the
// allocation that outruns the poll.)
// Severity: high (the host's disk filled by one call in milliseconds; the bound the README
// states is exceeded by a factor of up to `maxProcesses`).
// Fix (mechanism): a bound the kernel enforces on the jail as a whole — a per-jail file system of
// that size (loop-mounted image, size-capped tmpfs) or a project quota — or, short of that, refuse
// `fallocate` (x86_64 285, aarch64 47) in the seccomp filter with EOPNOTSUPP (glibc and Node fall
// back to writing, which the poll keeps pace with) AND give RLIMIT_FSIZE a share of the bound
// (`jailWriteMb / maxProcesses`) or remove what a call stopped for `disk` created.
import { chmodSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { IsolatedProcessSandbox } from '../../src/sandbox/index.js';
import { attackJail, runHostileTool } from '../support/attack-targets.js';
import { describeIsolated } from '../support/isolation.js';
import { shell } from './fixtures/repass-probe-tools.js';

const { base, jail } = attackJail('veridex-fallocate-');
afterAll(() => rmSync(base, { recursive: true, force: true }));

describeIsolated('a hostile tool that allocates rather than writes', () => {
  it('cannot leave far more than jailWriteMb in its jail in one call', async () => {
    const box = new IsolatedProcessSandbox({
      jailRoot: jail,
      jailWriteMb: 64,
      timeoutMs: 60_000,
      cpuMs: 60_000,
    });
    const directory = join(jail, 'burst');
    mkdirSync(directory);
    chmodSync(directory, 0o777);
    try {
      const { result } = await runHostileTool(
        box,
        shell,
        `cd ${directory} && for i in $(seq 1 60); do fallocate -l 63M f$i & done; wait; echo done`,
      );
      let bytes = 0;
      for (const name of readdirSync(directory)) {
        bytes += statSync(join(directory, name)).blocks * 512;
      }
      const megabytes = bytes / (1024 * 1024);
      // Secure: what the call leaves is within its bound plus one poll's worth of writing (the
      // README's "tens of MB"). Today: ~3,300 MB.
      expect(megabytes, JSON.stringify(result).slice(0, 300)).toBeLessThan(64 + 64);
    } finally {
      box.close();
      rmSync(directory, { recursive: true, force: true });
    }
  }, 120_000);
});
