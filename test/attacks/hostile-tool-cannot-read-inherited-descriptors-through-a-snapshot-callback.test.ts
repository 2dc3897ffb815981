import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { attackJail, canary, runAgentHoldingFd40 } from '../support/attack-targets.js';
import { describeIsolated } from '../support/isolation.js';

const { base, jail } = attackJail('veridex-attack30-fd-');
afterAll(() => rmSync(base, { recursive: true, force: true }));

describeIsolated(
  'IsolatedProcessSandbox and a tool module with a snapshot deserialize callback',
  () => {
    it('closes a descriptor held at 40 before any code of the tool module runs in the sandbox', async () => {
      const secret = canary('snapfd');
      const agent = fileURLToPath(new URL('./fixtures/snapshot-fd-agent.ts', import.meta.url));
      // Descriptors 3..39 closed, the secret at 40: what `node agent 40<secret` gives the agent.
      const { code, errors, printed } = await runAgentHoldingFd40(agent, jail, base, secret);
      expect(code, errors).toBe(0);
      // biome-ignore lint/suspicious/noExplicitAny: the agent fixture prints the tool's result as JSON.
      const { agentSees, result } = printed as any;
      expect(agentSees).toBe(true); // the agent really holds it: the attack is real
      expect(result).toMatchObject({ status: 'success' });
      const seen = JSON.parse(result.output.result);
      expect(seen.descriptors.length, 'the callback ran in the sandboxed child').toBeGreaterThan(0);
      expect(JSON.stringify(seen.contents), JSON.stringify(seen)).not.toContain(secret);
      expect(seen.descriptors, JSON.stringify(seen)).not.toContain(40);
    }, 120_000);
  },
);
