// IsolatedProcessSandbox counts what a call costs the host, kernel memory included: a tool that
// queues hundreds of MB in socket buffers with a 10 MB resident set is stopped (issue 30).
import { readFileSync, rmSync } from 'node:fs';
import { afterAll, expect, it } from 'vitest';
import { IsolatedProcessSandbox } from '../../src/sandbox/index.js';
import { attackJail, runHostileTool } from '../support/attack-targets.js';
import { describeIsolated } from '../support/isolation.js';
import * as probes from './fixtures/resource-tools.js';

const { base, jail } = attackJail('veridex-resources-test-');
afterAll(() => rmSync(base, { recursive: true, force: true }));

function availableMb(): number {
  const line = /^MemAvailable:\s+(\d+) kB$/m.exec(readFileSync('/proc/meminfo', 'utf8'));
  return Number(line?.[1]) / 1024;
}

/** Runs `work` while sampling the host's available memory; answers the largest fall in MB. */
async function hostMemoryFall<T>(work: () => Promise<T>): Promise<{ value: T; fallMb: number }> {
  const before = availableMb();
  let lowest = before;
  const sampler = setInterval(() => {
    lowest = Math.min(lowest, availableMb());
  }, 10);
  try {
    const value = await work();
    return { value, fallMb: before - lowest };
  } finally {
    clearInterval(sampler);
  }
}

describeIsolated('IsolatedProcessSandbox resource limits', () => {
  it('runs each call in a cgroup of its own where one is writable (this machine: root)', () => {
    const box = new IsolatedProcessSandbox({ jailRoot: jail });
    expect(box.resourceLimits).toMatch(/^cgroup_v[12]$/);
  });

  it('stops a tool that queues kernel socket buffers beyond memoryMb, and the host keeps its memory', async () => {
    // Descriptors plentiful, so that only the cgroup can stop the flood: 800 MB attempted.
    const box = new IsolatedProcessSandbox({
      jailRoot: jail,
      memoryMb: 64,
      maxOpenFiles: 10_000,
      timeoutMs: 120_000,
      cpuMs: 60_000,
    });
    const { value, fallMb } = await hostMemoryFall(() =>
      runHostileTool(box, probes.socketFlood, { megabytes: 800 }),
    );
    expect(value.result, JSON.stringify(value.result)).toMatchObject({
      code: 'sandbox_limit_exceeded',
      details: { limit: 'memory' },
    });
    // The call may hold memoryMb + 128 MB (kernel memory included); the bound leaves room for
    // other work on the host, and for what the kernel spends beside what it charges.
    expect(fallMb).toBeLessThan(600);
  }, 180_000);

  it('caps descriptors per process (RLIMIT_NOFILE), which the tool cannot raise', async () => {
    const box = new IsolatedProcessSandbox({ jailRoot: jail, maxOpenFiles: 64 });
    const { result } = await runHostileTool(box, probes.socketFlood, { megabytes: 800 });
    const seen = JSON.parse((result as { output: { result: string } }).output.result);
    expect(seen).toMatchObject({ stopped: 'EMFILE' });
    expect(seen.connections).toBeLessThan(32);
  }, 60_000);

  it('refuses a descriptor cap Node cannot start under', () => {
    expect(() => new IsolatedProcessSandbox({ jailRoot: jail, maxOpenFiles: 8 })).toThrow(
      expect.objectContaining({ code: 'config_invalid' }),
    );
  });
});
