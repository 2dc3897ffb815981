// Adversary 2 (a hostile tool author) and 9 (root in a container): the child closes inherited
// descriptors in the snapshot's main function, but a tool module can register a V8
// deserialize callback when the snapshot is built, and those run first.
import { spawn } from 'node:child_process';
import { closeSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { attackJail, canary } from '../support/attack-targets.js';
import { describeIsolated } from '../support/isolation.js';

const { base, jail } = attackJail('veridex-attack30-fd-');
afterAll(() => rmSync(base, { recursive: true, force: true }));

describeIsolated(
  'IsolatedProcessSandbox and a tool module with a snapshot deserialize callback',
  () => {
    it('closes a descriptor held at 40 before any code of the tool module runs in the sandbox', async () => {
      const secret = canary('snapfd');
      const secretFile = join(base, 'held-open.txt');
      writeFileSync(secretFile, secret, { mode: 0o600 });
      const held = openSync(secretFile, 'r');
      const agent = fileURLToPath(new URL('./fixtures/snapshot-fd-agent.ts', import.meta.url));
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
      expect(seen.descriptors.length, 'the callback ran in the sandboxed child').toBeGreaterThan(0);
      expect(JSON.stringify(seen.contents), JSON.stringify(seen)).not.toContain(secret);
      expect(seen.descriptors, JSON.stringify(seen)).not.toContain(40);
    }, 120_000);
  },
);
