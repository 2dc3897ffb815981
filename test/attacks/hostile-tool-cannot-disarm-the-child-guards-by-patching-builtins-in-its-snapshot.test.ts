// Adversary 2 (a hostile tool author) and 9 (root in a container) against IsolatedProcessSandbox:
// the tool module's top-level code runs once, when the startup snapshot is built, in the same heap
// as the child's call-start gate (call-start.ts) and descriptor hygiene (descriptor-hygiene.ts).
// They once called Node's `fs` through its module object at run time, so a module that replaced
// `fs.readSync` or `fs.readdirSync` there before the heap was frozen decided what they saw; they
// now capture every function they use when they are evaluated, before the tool's code.
import { spawn } from 'node:child_process';
import { closeSync, openSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { IsolatedProcessSandbox } from '../../src/sandbox/index.js';
import { attackJail, canary, runHostileTool } from '../support/attack-targets.js';
import { describeIsolated } from '../support/isolation.js';
import { gateBypass } from './fixtures/snapshot-gate-bypass-tool.js';

const { base, jail } = attackJail('veridex-adv30-builtins-');
afterAll(() => rmSync(base, { recursive: true, force: true }));

describeIsolated('a tool module that patches fs while its snapshot is built', () => {
  it('prewarm: answering the call-start gate itself (fs.readSync) still runs no tool code between calls', async () => {
    const box = new IsolatedProcessSandbox({ jailRoot: jail, timeoutMs: 30_000, prewarm: true });
    try {
      // The gate reads with the fs.readSync captured before the tool's code ran, so the tool's
      // replacement answers only the child's later read of the request — which it corrupts with
      // its fake start byte: the call fails, by the tool's own doing. What must hold is below.
      await runHostileTool(box, gateBypass, '');
      for (const name of readdirSync(jail))
        if (name.startsWith('ungated-')) rmSync(join(jail, name));
      // No call runs now; the prewarmed child for the next call waits (or should).
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const written = readdirSync(jail).filter((name) => name.startsWith('ungated-'));
      expect(written, `${written.length} files written while no call ran`).toEqual([]);
    } finally {
      box.close();
    }
  }, 120_000);

  it('blinding the descriptor hygiene (fs.readdirSync) leaves no inherited descriptor readable', async () => {
    const secret = canary('blindfd');
    const secretFile = join(base, 'held-open.txt');
    writeFileSync(secretFile, secret, { mode: 0o600 });
    const held = openSync(secretFile, 'r');
    const agent = fileURLToPath(new URL('./fixtures/blind-hygiene-agent.ts', import.meta.url));
    const stdio: Array<'pipe' | 'ignore' | number> = ['ignore', 'pipe', 'pipe'];
    for (let fd = 3; fd < 40; fd++) stdio.push('ignore');
    stdio.push(held);
    const child = spawn(process.execPath, ['--import', 'tsx', agent, jail, secret], { stdio });
    closeSync(held);
    let output = '';
    let errors = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (errors += chunk));
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(code, errors).toBe(0);
    const { agentSees, result } = JSON.parse(output);
    expect(agentSees).toBe(true); // the agent really holds it: the attack is real
    expect(result).toMatchObject({ status: 'success' });
    const seen = JSON.parse(result.output.result);
    expect(JSON.stringify(seen.contents), JSON.stringify(seen)).not.toContain(secret);
    expect(seen.descriptors, JSON.stringify(seen)).not.toContain(40);
  }, 120_000);
});
