// Adversary 9 (root inside a container) and 2 (hostile tool) against IsolatedProcessSandbox:
// system calls the seccomp filter's list does not name, and what the post-call sweep misses.
// Nothing here writes a host setting; every flood is bounded.
import { chmodSync, lstatSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { IsolatedProcessSandbox } from '../../src/sandbox/index.js';
import { attackJail, runHostileTool } from '../support/attack-targets.js';
import { describeIsolated } from '../support/isolation.js';
import { pythonProbe, shellProbe } from './fixtures/kernel-probes.js';

const { base, jail } = attackJail('veridex-attack30-');
afterAll(() => rmSync(base, { recursive: true, force: true }));
const PROBE = readFileSync(new URL('./fixtures/kernel-probe.py', import.meta.url), 'utf8');

function answer(result: unknown): string {
  expect(result).toMatchObject({ status: 'success' });
  return (result as { output: { result: string } }).output.result;
}

function parse(text: string): Record<string, string> {
  const seen: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const at = line.indexOf('=');
    if (at > 0) seen[line.slice(0, at)] = line.slice(at + 1);
  }
  return seen;
}

describeIsolated('a hostile tool against the IsolatedProcessSandbox kernel surface', () => {
  let box: IsolatedProcessSandbox;
  beforeAll(() => {
    box = new IsolatedProcessSandbox({ jailRoot: jail, timeoutMs: 60_000 });
  });
  afterAll(() => box.close());

  it('refuses the new mount API (fsopen, open_tree, fspick) with EPERM like mount itself', async () => {
    const raw = answer((await runHostileTool(box, pythonProbe, PROBE)).result);
    const seen = parse(raw);
    // 1 = EPERM, what the filter answers for mount/umount2/pivot_root.
    expect(seen.fsopen, raw.slice(-1500)).toBe('-1/1');
    expect(seen.open_tree).toBe('-1/1');
    expect(seen.fspick).toBe('-1/1');
  });

  it('cannot create a user namespace with clone3 nor give a file capabilities', async () => {
    const seen = parse(answer((await runHostileTool(box, pythonProbe, PROBE)).result));
    expect(seen.clone3_newuser, JSON.stringify(seen)).toMatch(/^-1\//);
    expect(seen.setxattr_cap).toMatch(/^-1\//);
    expect(seen.mknod_char).toMatch(/^-1\//);
    expect(seen.mknodat_blk).toMatch(/^-1\//);
    expect(lstatSync(join(jail, 'memdev'), { throwIfNoEntry: false })).toBeUndefined();
  });

  it('leaves no set-gid directory in the jail, however deep the tool nests it', async () => {
    // A fresh jail holding an operator's shared directory, set-gid so files keep its group (a
    // common layout).
    const own = attackJail('veridex-attack30-setgid-');
    const jail = own.jail;
    mkdirSync(join(jail, 'shared'));
    chmodSync(join(jail, 'shared'), 0o2775);
    const box = new IsolatedProcessSandbox({ jailRoot: jail, timeoutMs: 60_000 });
    try {
      // 80 levels under the operator's set-gid directory: each new directory would inherit
      // S_ISGID from its parent (the kernel does it, no chmod needed) below the sweep's depth 64.
      const chain = Array.from({ length: 80 }, () => 'd').join('/');
      const { result, securityEvents } = await runHostileTool(
        box,
        shellProbe,
        `cd shared && mkdir -p ${chain} && echo made`,
      );
      expect(answer(result)).toContain('made');
      const left: string[] = [];
      let path = join(jail, 'shared');
      for (let depth = 0; depth < 80; depth++) {
        path = join(path, 'd');
        if ((statSync(path).mode & 0o6000) !== 0) left.push(String(depth));
      }
      // The operator's set-gid directory is reported (and stripped before the call starts)...
      expect(securityEvents.length).toBeGreaterThan(0);
      // ...so nothing the tool nests below it, at any depth, inherits the bit.
      expect(left, `set-gid directories left at depths ${left.join(',')}`).toEqual([]);
    } finally {
      await box.close();
      rmSync(own.base, { recursive: true, force: true });
    }
  });
});
