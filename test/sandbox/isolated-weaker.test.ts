// IsolatedProcessSandbox on a host without a writable cgroup (simulated: discovery finds none):
// it refuses to start unless the weaker mode is named, and records that mode with every call.
import { rmSync } from 'node:fs';
import { afterAll, expect, it, vi } from 'vitest';
import { IsolatedProcessSandbox } from '../../src/sandbox/index.js';
import { attackJail, runHostileTool } from '../support/attack-targets.js';
import { describeIsolated } from '../support/isolation.js';
import * as hostile from './fixtures/hostile-tools.js';
import * as probes from './fixtures/resource-tools.js';

vi.mock('../../src/sandbox/cgroup-limits.js', async (original) => ({
  ...(await original<typeof import('../../src/sandbox/cgroup-limits.js')>()),
  findCgroupHost: () => ({ reason: 'cgroup v1 memory at /sys/fs/cgroup/memory: EROFS' }),
}));

const { base, jail } = attackJail('veridex-weaker-test-');
afterAll(() => rmSync(base, { recursive: true, force: true }));

describeIsolated(
  'IsolatedProcessSandbox without a writable cgroup',
  () => {
    it('refuses to start, saying why and how to opt into the weaker mode', () => {
      expect(() => new IsolatedProcessSandbox({ jailRoot: jail })).toThrow(
        expect.objectContaining({
          code: 'sandbox_unavailable',
          message: expect.stringMatching(/EROFS.*allowWeaker: \['memory_cgroup'\]/),
        }),
      );
    });

    it('with allowWeaker: memory_cgroup, runs, records the weaker mode and caps descriptors', async () => {
      const box = new IsolatedProcessSandbox({ jailRoot: jail, allowWeaker: ['memory_cgroup'] });
      expect(box.resourceLimits).toBe('rlimit');
      const { result, securityEvents } = await runHostileTool(box, hostile.upper, 'hi');
      expect(result).toMatchObject({ status: 'success', output: { result: 'HI' } });
      expect(securityEvents[0]!.payload).toMatchObject({
        violations: [expect.objectContaining({ target: 'sandbox:memory_cgroup' })],
      });
      const flood = await runHostileTool(box, probes.socketFlood, { megabytes: 800 });
      const seen = JSON.parse((flood.result as { output: { result: string } }).output.result);
      // 128 descriptors: the flood stops at EMFILE, a few tens of MB in.
      expect(seen).toMatchObject({ stopped: 'EMFILE' });
      expect(seen.queuedMb).toBeLessThan(64);
    }, 60_000);
  },
  { allowWeaker: ['memory_cgroup'] },
);
