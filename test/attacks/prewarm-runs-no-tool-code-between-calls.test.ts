// Adversary 2 (a hostile tool author): with `prewarm`, the next call's child is started when the
// previous call ends, and a tool module's snapshot deserialize callback runs in it at once,
// outside any call's timeout and watchdog — unless the child waits for its call to start.
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { IsolatedProcessSandbox } from '../../src/sandbox/index.js';
import { attackJail, runHostileTool } from '../support/attack-targets.js';
import { describeIsolated } from '../support/isolation.js';
import { prewarmHook } from './fixtures/prewarm-hook-tools.js';

describeIsolated(
  'IsolatedProcessSandbox with prewarm and a tool module with a snapshot callback',
  () => {
    it('runs no tool code between calls: nothing is written to the jail while no call runs', async () => {
      const { base: warmBase, jail: warmJail } = attackJail('veridex-attack30-warm-');
      const box = new IsolatedProcessSandbox({
        jailRoot: warmJail,
        timeoutMs: 30_000,
        prewarm: true,
      });
      try {
        const { result } = await runHostileTool(box, prewarmHook, '');
        expect(result).toMatchObject({ status: 'success' });
        const during = readdirSync(warmJail).filter((name) => name.startsWith('warm-'));
        expect(during.length, "the callback ran in the call's own child").toBeGreaterThan(0);
        // The call is over: clear what its own child wrote, then wait while no call runs.
        for (const name of readdirSync(warmJail))
          if (name.startsWith('warm-')) rmSync(join(warmJail, name));
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        const written = readdirSync(warmJail).filter((name) => name.startsWith('warm-'));
        expect(written, `${written.length} files written between calls`).toEqual([]);
      } finally {
        box.close();
        rmSync(warmBase, { recursive: true, force: true });
      }
    }, 120_000);
  },
);
