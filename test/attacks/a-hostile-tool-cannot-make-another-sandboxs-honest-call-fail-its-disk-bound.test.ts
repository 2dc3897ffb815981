// Adversary 2 (a hostile tool author) against another tenant's honest tool. Each
// IsolatedProcessSandbox call's disk bound (`jailWriteMb`, `jailWriteFiles`) is read from the
// jail's WHOLE file system (`statfs` at the call's start and every 20 ms poll,
// `jail-disk-budget.ts`), so what any other process frees or takes there counts as the call's.
// The README says a busy process "can stop a call early"; it does not say that a hostile tool in
// ANOTHER sandbox, staying within its own bounds, decides when an honest call fails.
//
// Steps: sandbox B (honest) runs a tool that writes nothing and sleeps 4 s; meanwhile sandbox A
// (hostile, separate jail, same host file system, same `jailWriteMb: 32`) makes two calls, each
// writing 20 MB — each within its own bound, each left in its jail. B's call, which wrote zero
// bytes, is stopped with `sandbox_limit_exceeded` (`details.limit: 'disk'`).
// Severity: medium (denial of service of any concurrent honest call — or of the agent's run
// when it treats a limit error as fatal — by a tool that never exceeds its own bound; with the
// inode bound the same works with 10,000 empty files per call).
// Fix (mechanism): account for the call's own writes, not the file system's: give each jail its
// own file system (a per-jail loop-mounted image or size-capped tmpfs, or an ext4/XFS project
// quota on the jail directory where available, read back with `quotactl`), or charge the jail by
// walking its own usage (du-style, in slices) when the file-system figure says "over" before
// stopping the call — so a drop caused elsewhere never stops it.
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { IsolatedProcessSandbox } from '../../src/sandbox/index.js';
import { attackJail, runHostileTool } from '../support/attack-targets.js';
import { describeIsolated } from '../support/isolation.js';
import { shell } from './fixtures/repass-probe-tools.js';

const { base, jail } = attackJail('veridex-cross-disk-');
afterAll(() => rmSync(base, { recursive: true, force: true }));

describeIsolated('a hostile tool in one sandbox against an honest call in another', () => {
  it('cannot stop an honest call that writes nothing with a false disk limit', async () => {
    const honestJail = join(base, 'honest');
    mkdirSync(honestJail);
    chmodSync(honestJail, 0o777);
    const limits = { jailWriteMb: 32, timeoutMs: 60_000, cpuMs: 60_000 };
    const hostile = new IsolatedProcessSandbox({ jailRoot: jail, ...limits });
    const honest = new IsolatedProcessSandbox({ jailRoot: honestJail, ...limits });
    try {
      const victim = runHostileTool(honest, shell, 'sleep 4; echo ok');
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      for (const name of ['hog1', 'hog2']) {
        const call = await runHostileTool(
          hostile,
          shell,
          `dd if=/dev/zero of=${join(jail, name)}.bin bs=1M count=20 2>&1`,
        );
        // Each hostile call stays within its own bound.
        expect(call.result).toMatchObject({ status: 'success' });
      }
      const { result } = await victim;
      // Secure: the honest call, which wrote nothing, succeeds. Today: limit 'disk'.
      expect(result, JSON.stringify(result)).toMatchObject({ status: 'success' });
    } finally {
      hostile.close();
      honest.close();
    }
  }, 120_000);
});
