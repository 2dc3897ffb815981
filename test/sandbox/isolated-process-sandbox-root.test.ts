// IsolatedProcessSandbox against root inside a container (threat model adversary 9, issue 30):
// the agent runs as root here; every attack is tried for real and must leave the host as it was.
// No host setting is ever written: kernel settings are only opened for writing, then closed.
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { IsolatedProcessSandbox } from '../../src/sandbox/index.js';
import {
  attackJail,
  canary,
  runAgentHoldingFd40,
  runHostileTool,
} from '../support/attack-targets.js';
import { describeIsolated } from '../support/isolation.js';
import * as root from './fixtures/root-tools.js';

const { base, jail, outside } = attackJail('veridex-root-test-');
afterAll(() => rmSync(base, { recursive: true, force: true }));
const asRoot = process.getuid?.() === 0;

function answer(result: unknown): string {
  expect(result).toMatchObject({ status: 'success' });
  return (result as { output: { result: string } }).output.result;
}

/** Every file under `directory` with a set-uid or set-gid bit, and every file root owns. */
function hostView(directory: string): { setId: string[]; rootOwned: string[] } {
  const setId: string[] = [];
  const rootOwned: string[] = [];
  for (const name of readdirSync(directory, { recursive: true }) as string[]) {
    const stat = statSync(join(directory, name), { throwIfNoEntry: false });
    if (stat && (stat.mode & 0o6000) !== 0)
      setId.push(`${name} ${(stat.mode & 0o7777).toString(8)}`);
    if (stat?.uid === 0) rootOwned.push(name);
  }
  return { setId, rootOwned };
}

describeIsolated('IsolatedProcessSandbox with a root agent', () => {
  let box: IsolatedProcessSandbox;
  beforeAll(() => {
    box = new IsolatedProcessSandbox({ jailRoot: jail, timeoutMs: 30_000 });
  });
  afterAll(() => box.close());

  it('runs the tool as an unprivileged host user, never host root', async () => {
    const file = join(jail, `identity-${canary('id')}.txt`);
    answer((await runHostileTool(box, root.hostIdentity, file)).result);
    // What the host sees: the owner of the file the tool created (its uid_map reads relative to
    // bubblewrap's nested namespaces, so it cannot tell).
    const owner = statSync(file);
    expect(owner.uid).not.toBe(0);
    expect(owner.gid).not.toBe(0);
    if (asRoot) expect([owner.uid, owner.gid]).toEqual([65534, 65534]);
    expect(box.configuration).toMatchObject({ seccomp: true, weakened: [] });
    if (asRoot) expect(box.configuration).toMatchObject({ hostUid: 65534, hostGid: 65534 });
    // The jail was handed over, but not a file hard-linked from outside it.
    if (asRoot) expect(statSync(join(outside, 'secret.txt')).uid).toBe(0);
  });

  it('cannot open a host kernel setting for writing: /proc/sys is read-only, /sys absent', async () => {
    const settings = [
      '/proc/sys/kernel/core_pattern',
      '/proc/sys/kernel/modprobe',
      '/proc/sys/vm/overcommit_memory',
      '/proc/sys/kernel/hostname',
      '/proc/sysrq-trigger',
    ];
    const before = readFileSync('/proc/sys/kernel/core_pattern', 'utf8');
    const { result } = await runHostileTool(box, root.openKernelSettings, settings);
    const seen = JSON.parse(answer(result));
    for (const path of settings) expect(seen.opened[path], path).not.toBe('done');
    expect(seen.procSys).toMatch(/^ro,/);
    expect(seen.sys).toBeNull();
    expect(readFileSync('/proc/sys/kernel/core_pattern', 'utf8')).toBe(before);
  });

  it('leaves no set-uid or set-gid file on the host, however it is made', async () => {
    const { result } = await runHostileTool(box, root.plantSetId, '');
    const tried = JSON.parse(answer(result));
    expect(tried.copy).toBe('done');
    // The seccomp filter refuses the modes outright (EPERM), from Node and from a shell.
    expect(tried.chmodSetuid).toBe('EPERM');
    expect(tried.chmodSetgid).toBe('EPERM');
    expect(tried.createSetuid).toBe('EPERM');
    expect(tried.shell).not.toBe('done');
    const view = hostView(jail);
    expect(view.setId).toEqual([]);
    expect(view.rootOwned.filter((name) => /id$|created/.test(name))).toEqual([]);
  });

  it('cannot mount, unshare or use the other denied calls (seccomp is on)', async () => {
    const seen = JSON.parse(answer((await runHostileTool(box, root.deniedCalls, '')).result));
    expect(seen.seccomp).toBe('2');
    expect(seen.unshare).not.toBe('done');
  });
});

describeIsolated('IsolatedProcessSandbox and descriptors the agent inherited', () => {
  it('closes a descriptor held at 40 above a gap: the tool cannot read it', async () => {
    const secret = canary('fd40');
    const agent = fileURLToPath(new URL('./fixtures/fd-agent.ts', import.meta.url));
    // Descriptors 3..39 closed, the secret at 40: what `node agent 40<secret` gives the agent.
    const { code, errors, printed } = await runAgentHoldingFd40(agent, jail, base, secret);
    expect(code, errors).toBe(0);
    // biome-ignore lint/suspicious/noExplicitAny: the agent fixture prints the tool's result as JSON.
    const { agentSees, result } = printed as any;
    expect(agentSees).toBe(true); // the agent really holds it: the attack is real
    const seen = JSON.parse(answer(result));
    expect(seen.found).toEqual([]);
    expect(seen.fd40).not.toBe('done');
    expect(seen.descriptors).not.toContain(40);
  }, 120_000);
});

/** A bubblewrap that hides or refuses one capability, and otherwise is the real one. */
function fakeBwrap(name: string, script: string): string {
  const real = execFileSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).trim();
  const path = join(base, name);
  writeFileSync(path, `#!/bin/sh\nREAL=${real}\n${script}\nexec "$REAL" "$@"\n`, { mode: 0o755 });
  return path;
}

describeIsolated('IsolatedProcessSandbox where a defence is missing', () => {
  it('refuses to start without seccomp unless allowWeaker names it, then records it on every call', async () => {
    const bwrapPath = fakeBwrap(
      'bwrap-no-seccomp',
      'if [ "$1" = --help ]; then "$REAL" --help | grep -v -e "--seccomp"; exit 0; fi',
    );
    expect(() => new IsolatedProcessSandbox({ jailRoot: jail, bwrapPath })).toThrow(
      expect.objectContaining({
        code: 'sandbox_unavailable',
        details: { missing: 'seccomp' },
        message: expect.stringMatching(/no --seccomp option.*allowWeaker: \['seccomp'\]/),
      }),
    );
    const weak = new IsolatedProcessSandbox({
      jailRoot: jail,
      bwrapPath,
      allowWeaker: ['seccomp'],
    });
    expect(weak.configuration).toMatchObject({ seccomp: false, weakened: ['seccomp'] });
    const { result, securityEvents } = await runHostileTool(weak, root.plantSetId, '');
    // Without the filter the chmod succeeds inside; the sweep after the call takes the bit away.
    expect(JSON.parse(answer(result)).chmodSetuid).toBe('done');
    expect(hostView(jail).setId).toEqual([]);
    const recorded = JSON.stringify(securityEvents);
    expect(recorded).toContain('allowWeaker: seccomp');
    expect(recorded).toMatch(/"target":"rootid","reason":"a set-uid or set-gid bit was left/);
  });

  it("refuses to run a root agent's tools as host root unless allowWeaker names identity", async () => {
    const bwrapPath = fakeBwrap(
      'bwrap-root-only',
      'if [ "$1" != --help ] && [ "$(id -u)" != 0 ]; then echo "bwrap: No permissions to create new namespace" >&2; exit 1; fi',
    );
    if (!asRoot) {
      // Not root: nothing to drop; a bubblewrap that refuses this user refuses the sandbox.
      expect(() => new IsolatedProcessSandbox({ jailRoot: jail, bwrapPath })).toThrow(
        expect.objectContaining({ code: 'sandbox_unavailable' }),
      );
      return;
    }
    expect(() => new IsolatedProcessSandbox({ jailRoot: jail, bwrapPath })).toThrow(
      expect.objectContaining({ code: 'sandbox_unavailable', details: { missing: 'identity' } }),
    );
    const weak = new IsolatedProcessSandbox({
      jailRoot: jail,
      bwrapPath,
      allowWeaker: ['identity'],
    });
    expect(weak.configuration).toMatchObject({ hostUid: 0, seccomp: true, weakened: ['identity'] });
    // Even as host root, /proc/sys stays read-only and the filter holds.
    const { result, securityEvents } = await runHostileTool(weak, root.openKernelSettings, [
      '/proc/sys/kernel/core_pattern',
    ]);
    expect(JSON.parse(answer(result)).opened['/proc/sys/kernel/core_pattern']).toBe('EROFS');
    expect(JSON.stringify(securityEvents)).toContain('allowWeaker: identity');
  });

  it('rejects an unknown weaker mode, a root sandbox user and a jail it cannot reach', () => {
    expect(
      () =>
        new IsolatedProcessSandbox({ jailRoot: jail, allowWeaker: ['everything' as 'seccomp'] }),
    ).toThrow(expect.objectContaining({ code: 'config_invalid' }));
    expect(
      () => new IsolatedProcessSandbox({ jailRoot: jail, sandboxUser: { uid: 0, gid: 0 } }),
    ).toThrow(
      expect.objectContaining({
        code: 'config_invalid',
        message: expect.stringMatching(/sandboxUser\.uid/),
      }),
    );
    if (asRoot) {
      const hidden = join(base, 'private');
      mkdirSync(join(hidden, 'jail'), { recursive: true, mode: 0o700 });
      chmodSync(hidden, 0o700);
      expect(() => new IsolatedProcessSandbox({ jailRoot: join(hidden, 'jail') })).toThrow(
        expect.objectContaining({
          code: 'config_invalid',
          message: expect.stringMatching(/not searchable by uid 65534/),
        }),
      );
    }
  });
});
