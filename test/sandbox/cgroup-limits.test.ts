// Per-call cgroups, v2 and v1, on a directory laid out as the kernel would (the kernel's own
// behaviour is proven in isolated-resources.test.ts); and the fail-closed choice without one.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CallCgroup,
  findCgroupHost,
  parseMountinfo,
  parseProcCgroup,
} from '../../src/sandbox/cgroup-limits.js';
import { SandboxResources } from '../../src/sandbox/sandbox-resources.js';
import { removeStaleCgroups } from '../../src/sandbox/stale-cgroups.js';

const base = mkdtempSync(join(tmpdir(), 'veridex-cgroup-test-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));
const MiB = 1024 * 1024;

describe('cgroup discovery', () => {
  it('reads its own cgroup per controller and the cgroup mounts, octal escapes decoded', () => {
    const own = parseProcCgroup('4:memory:/agents/a\n8:pids,cpu:/\n0::/user.slice\n');
    expect(own.get('memory')).toBe('/agents/a');
    expect(own.get('pids')).toBe('/');
    expect(own.get('cpu')).toBe('/');
    expect(own.get('')).toBe('/user.slice');
    const mounts = parseMountinfo(
      '31 30 0:28 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n' +
        '40 30 0:29 /agents /mnt/my\\040cgroups rw - cgroup2 cgroup2 rw\n' +
        '30 22 0:27 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n',
    );
    expect(mounts).toEqual([
      {
        root: '/',
        mountPoint: '/sys/fs/cgroup/memory',
        fstype: 'cgroup',
        superOptions: ['rw', 'memory'],
      },
      { root: '/agents', mountPoint: '/mnt/my cgroups', fstype: 'cgroup2', superOptions: ['rw'] },
    ]);
  });

  it('uses cgroup v2 where it can create a limited child of its own cgroup', () => {
    const v2 = join(base, 'v2');
    mkdirSync(join(v2, 'agents', 'a'), { recursive: true });
    const host = findCgroupHost({
      selfCgroup: '0::/agents/a\n',
      mountinfo: `40 30 0:29 / ${v2} rw - cgroup2 cgroup2 rw\n`,
    });
    expect(host).toEqual({ version: 'v2', memoryParent: join(v2, 'agents', 'a') });
    const cgroup = CallCgroup.create(host as never, { memoryBytes: 192 * MiB, maxProcesses: 32 });
    const [directory] = onlyChild(join(v2, 'agents', 'a'));
    expect(readFileSync(join(directory, 'memory.max'), 'utf8')).toBe(String(192 * MiB));
    expect(readFileSync(join(directory, 'pids.max'), 'utf8')).toBe('32');
    cgroup.join(4242);
    expect(readFileSync(join(directory, 'cgroup.procs'), 'utf8')).toBe('4242');
    expect(cgroup.oomKilled()).toBe(false);
    writeFileSync(join(directory, 'memory.events'), 'low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n');
    expect(cgroup.oomKilled()).toBe(true);
  });

  it('falls back to the v1 memory and pids hierarchies, limiting both', () => {
    const memory = join(base, 'v1', 'memory');
    const pids = join(base, 'v1', 'pids');
    mkdirSync(join(memory, 'agent'), { recursive: true });
    mkdirSync(pids, { recursive: true });
    const host = findCgroupHost({
      selfCgroup: '4:memory:/agent\n8:pids:/\n0::/\n',
      mountinfo:
        `31 30 0:28 / ${memory} rw - cgroup cgroup rw,memory\n` +
        `32 30 0:29 / ${pids} rw - cgroup cgroup rw,pids\n`,
    });
    expect(host).toEqual({ version: 'v1', memoryParent: join(memory, 'agent'), pidsParent: pids });
    CallCgroup.create(host as never, { memoryBytes: 64 * MiB, maxProcesses: 16 }).join(77);
    const [inMemory] = onlyChild(join(memory, 'agent'));
    const [inPids] = onlyChild(pids);
    expect(readFileSync(join(inMemory, 'memory.limit_in_bytes'), 'utf8')).toBe(String(64 * MiB));
    expect(readFileSync(join(inPids, 'pids.max'), 'utf8')).toBe('16');
    expect(readFileSync(join(inMemory, 'cgroup.procs'), 'utf8')).toBe('77');
    expect(readFileSync(join(inPids, 'cgroup.procs'), 'utf8')).toBe('77');
  });

  it('says why when no hierarchy is mounted', () => {
    expect(findCgroupHost({ selfCgroup: '0::/\n', mountinfo: '' })).toEqual({
      reason: 'no cgroup v2 or v1 memory hierarchy is mounted',
    });
  });
});

describe('without a writable cgroup', () => {
  const none = () => ({ reason: 'read-only /sys/fs/cgroup' });

  it('refuses to start unless the weaker mode is named (fail closed)', () => {
    expect(() =>
      SandboxResources.resolve({ allowWeaker: [], maxOpenFiles: 128, cgroups: none }),
    ).toThrow(
      expect.objectContaining({
        code: 'sandbox_unavailable',
        message: expect.stringMatching(
          /read-only \/sys\/fs\/cgroup.*allowWeaker: \['memory_cgroup'\]/,
        ),
      }),
    );
    expect(() =>
      SandboxResources.resolve({ allowWeaker: ['seccomp'], maxOpenFiles: 128, cgroups: none }),
    ).toThrow(expect.objectContaining({ code: 'sandbox_unavailable' }));
  });

  it('with allowWeaker: memory_cgroup, caps descriptors and reports the weaker mode with every call', () => {
    const resources = SandboxResources.resolve({
      allowWeaker: ['memory_cgroup'],
      maxOpenFiles: 100,
      cgroups: none,
    });
    expect(resources.mode).toBe('rlimit');
    const call = resources.forCall({ memoryMb: 192, maxProcesses: 32 });
    expect(call.prefix.slice(0, 2)).toEqual(['/bin/sh', '-c']);
    expect(call.prefix.at(-1)).toBe('100');
    expect(resources.weakenedNotices()).toEqual([
      expect.objectContaining({ capability: 'process', target: 'sandbox:memory_cgroup' }),
    ]);
  });
});

describe('cgroups left behind by agents', () => {
  it('removes the empty ones of agents no longer running, and nothing else', () => {
    const memory = join(base, 'stale', 'memory');
    const pids = join(base, 'stale', 'pids');
    const made = (parent: string, name: string) => {
      mkdirSync(join(parent, name), { recursive: true });
      return name;
    };
    const dead = made(memory, 'veridex-900001-3-0a1b2c3d');
    made(pids, dead);
    const running = made(memory, 'veridex-900002-1-ffffffff');
    const own = made(memory, `veridex-${process.pid}-1-12345678`);
    const busy = made(memory, 'veridex-900003-1-abcdef01');
    writeFileSync(join(memory, busy, 'cgroup.procs'), '4242'); // a plain directory: not empty
    const other = made(memory, 'not-veridex-900001');
    removeStaleCgroups(
      { version: 'v1', memoryParent: memory, pidsParent: pids },
      { alive: (pid) => pid === 900002, minimumAgeMs: 0 },
    );
    expect(readdirSync(memory).sort()).toEqual([busy, other, own, running].sort());
    expect(readdirSync(pids)).toEqual([]);
  });

  it('leaves a cgroup younger than the minimum age for a later attempt', async () => {
    const parent = join(base, 'stale-young');
    mkdirSync(join(parent, 'veridex-900004-1-00000000'), { recursive: true });
    removeStaleCgroups(
      { version: 'v2', memoryParent: parent },
      { alive: () => false, minimumAgeMs: 300 },
    );
    expect(readdirSync(parent)).toHaveLength(1);
    for (let waited = 0; readdirSync(parent).length > 0 && waited < 20_000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(readdirSync(parent)).toEqual([]);
  });
});

/** The call's cgroup: the newest child (in a plain directory the probe's cannot be removed). */
function onlyChild(parent: string): [string] {
  const sequence = (name: string) => Number(name.split('-')[2]);
  const children = readdirSync(parent)
    .filter((name) => name.startsWith('veridex-'))
    .sort((a, b) => sequence(b) - sequence(a));
  return [join(parent, children[0]!)];
}
