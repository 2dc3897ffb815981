import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildToolProposal, PolicyEngine } from '../../src/policy/index.js';
import { type AnyGovernedTool, tool } from '../../src/tools/index.js';
import { ListSanctionsScreener } from '../../src/treasury/index.js';
import { ACME, kitFixture, SANCTIONED } from './kit-fixture.js';

async function setup(policy: Parameters<typeof kitFixture>[0]['kit'] = {}) {
  const f = await kitFixture({
    backend: { kind: 'memory' },
    sanctions: new ListSanctionsScreener({ addresses: [SANCTIONED.toLowerCase()], source: 'SDN' }),
    kit: {
      policy: {
        dualApprovalThreshold: { USD: '10000.00' },
        perTransactionMax: { USD: '100000.00' },
        dailyLimit: { USD: '150000.00' },
        ...policy.policy,
      },
    },
  });
  const engine = new PolicyEngine({ rules: f.kit.policyRules, audit: f.audit });
  let call = 0;
  const decide = (args: Record<string, unknown>, target: AnyGovernedTool = f.kit.tool.transfer) =>
    engine.evaluate(
      buildToolProposal({
        tool: target,
        arguments: args,
        threadId: 't',
        runId: 't',
        toolCallId: `call_${call++}`,
        proposer: 'payout-bot',
      }),
    );
  return { ...f, decide };
}

const usd = (amount: string, to = ACME) => ({ to, amount, currency: 'USD' });

describe('treasury policy rules', () => {
  it('escalates amounts at or above the dual-approval threshold to dual_approval', async () => {
    const { decide } = await setup();
    expect(await decide(usd('50000.00'))).toMatchObject({
      verdict: 'escalate',
      route: 'dual_approval',
      ruleId: 'treasury.dual_approval_threshold',
      reason: '50000.00 USD is at or above the dual-approval threshold of 10000.00 USD',
    });
    expect(await decide(usd('10000'))).toMatchObject({
      verdict: 'escalate',
      route: 'dual_approval',
    });
    // Below the threshold the kit has no opinion: the financial default asks one human.
    expect(await decide(usd('9999.99'))).toMatchObject({
      verdict: 'escalate',
      route: 'human_required',
      ruleId: 'default.safety_class',
    });
  });

  it('denies a sanctioned or denylisted counterparty with sanctions_hit before any approval', async () => {
    const denied = '0x3333333333333333333333333333333333333333';
    const { decide } = await setup({ policy: { counterpartyDenylist: [denied] } });
    const sanctioned = await decide(usd('50000.00', SANCTIONED));
    expect(sanctioned).toMatchObject({
      verdict: 'deny',
      code: 'sanctions_hit',
      ruleId: 'treasury.sanctions',
    });
    expect(sanctioned.reason).toMatch(/address listed on SDN/);
    // The escalation rule sits at a lower priority and was never consulted.
    expect(sanctioned.evaluations.map((e) => e.ruleId)).not.toContain(
      'treasury.dual_approval_threshold',
    );
    expect(await decide(usd('5.00', denied.toUpperCase().replace('0X', '0x')))).toMatchObject({
      verdict: 'deny',
      code: 'sanctions_hit',
    });
  });

  it('denies amounts above the per-transaction maximum with ceiling_exceeded', async () => {
    const { decide } = await setup();
    expect(await decide(usd('100000.01'))).toMatchObject({
      verdict: 'deny',
      code: 'ceiling_exceeded',
      ruleId: 'treasury.per_transaction_max',
    });
  });

  it('pre-checks the rolling daily limit against what is already spent or reserved', async () => {
    const { decide, ceilings } = await setup();
    await ceilings.reserve({
      idempotencyKey: 'earlier',
      appId: 'ops-suite-01',
      agentId: 'payout-bot',
      currency: 'USD',
      amount: { amount: 14_000_000n, currency: 'USD', decimals: 2 },
      counterparty: ACME,
      threadId: 'other',
      runId: 'other',
      toolCallId: 'c',
      proposalHash: 'h',
      limits: { windowMs: 86_400_000 },
      now: new Date(),
    });
    const denied = await decide(usd('10000.01'));
    expect(denied).toMatchObject({
      verdict: 'deny',
      code: 'ceiling_exceeded',
      ruleId: 'treasury.daily_limit',
    });
    expect(denied.reason).toMatch(/140000\.00 already spent or reserved/);
    expect(await decide(usd('10000.00'))).toMatchObject({ verdict: 'escalate' });
  });

  it('denies counterparties missing from a configured allowlist', async () => {
    const { decide } = await setup({ policy: { counterpartyAllowlist: [ACME] } });
    expect(await decide(usd('5.00', ACME.toLowerCase()))).toMatchObject({ verdict: 'escalate' });
    expect(await decide(usd('5.00', '0x4444444444444444444444444444444444444444'))).toMatchObject({
      verdict: 'deny',
      code: 'policy_denied',
      ruleId: 'treasury.counterparty_allowlist',
    });
  });

  it('denies arguments it cannot read exactly with input_invalid', async () => {
    const { decide } = await setup();
    expect(await decide(usd('1e6'))).toMatchObject({ verdict: 'deny', code: 'input_invalid' });
    expect(await decide({ amount: '5.00', currency: 'USD' })).toMatchObject({
      verdict: 'deny',
      code: 'input_invalid',
    });
  });

  it('leaves other tools alone, even one named transfer', async () => {
    const { decide } = await setup();
    const lookalike = tool({
      name: 'transfer',
      description: 'Move files between folders.',
      safetyClass: 'write',
      input: z.object({ to: z.string(), amount: z.string(), currency: z.string() }),
      output: z.object({ ok: z.boolean() }),
      execute: async () => ({ ok: true }),
    });
    expect(await decide(usd('50000.00', SANCTIONED), lookalike)).toMatchObject({
      verdict: 'allow',
      ruleId: 'default.safety_class',
    });
  });
});
