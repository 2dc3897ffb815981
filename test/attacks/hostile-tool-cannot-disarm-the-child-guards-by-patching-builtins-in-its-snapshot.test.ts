import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { IsolatedProcessSandbox } from '../../src/sandbox/index.js';
import {
  attackJail,
  canary,
  runAgentHoldingFd40,
  runHostileTool,
} from '../support/attack-targets.js';
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
    const agent = fileURLToPath(new URL('./fixtures/blind-hygiene-agent.ts', import.meta.url));
    // Descriptors 3..39 closed, the secret at 40: what `node agent 40<secret` gives the agent.
    const { code, errors, printed } = await runAgentHoldingFd40(agent, jail, base, secret);
    expect(code, errors).toBe(0);
    // biome-ignore lint/suspicious/noExplicitAny: the agent fixture prints the tool's result as JSON.
    const { agentSees, result } = printed as any;
    expect(agentSees).toBe(true); // the agent really holds it: the attack is real
    expect(result).toMatchObject({ status: 'success' });
    const seen = JSON.parse(result.output.result);
    expect(JSON.stringify(seen.contents), JSON.stringify(seen)).not.toContain(secret);
    expect(seen.descriptors, JSON.stringify(seen)).not.toContain(40);
  }, 120_000);
});
