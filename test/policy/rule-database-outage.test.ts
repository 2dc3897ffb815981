import { HumanMessage } from '@langchain/core/messages';
import { Command } from '@langchain/langgraph';
import { describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/index.js';
import { VeridexError } from '../../src/errors/index.js';
import { isThreadFinished } from '../../src/nodes/index.js';
import { buildToolProposal, PolicyEngine, policyRule } from '../../src/policy/index.js';
import type { AnyGovernedTool } from '../../src/tools/index.js';
import { buildGovernedGraph } from '../nodes/governed-graph.js';
import { signAs } from '../support/approvers.js';

// Found by `npm run soak`: the treasury's daily-limit rule reads the ceilings table; when the
// database dropped the connection while an approved transfer was re-planned, the rule's
// db_unavailable was taken as its answer — "deny" (fail closed) — and the approved payment was
// checkpointed as denied, never to run. An unreachable database is no verdict: the step fails
// (nothing runs: still fail-closed) and stays resumable.

const outage = () =>
  new VeridexError('db_unavailable', 'Database at postgres://127.0.0.1:5432/test is unavailable.');

const tool = {
  name: 'transfer',
  safetyClass: 'financial',
  schemaHash: 'h'.repeat(64),
  trust: 'local',
} as unknown as AnyGovernedTool;

describe('a policy rule that cannot reach its database', () => {
  it('makes evaluate throw db_unavailable instead of denying', async () => {
    const audit = new AuditLog();
    const engine = new PolicyEngine({
      audit,
      rules: [
        policyRule({
          id: 'limits.daily',
          name: 'Daily limit',
          priority: 100,
          evaluate: () => {
            throw outage();
          },
        }),
      ],
    });
    const proposal = buildToolProposal({
      tool,
      arguments: { amount: '10.00' },
      threadId: 't-1',
      runId: 'r-1',
      toolCallId: 'call_1',
      proposer: 'payout-bot',
    });
    await expect(engine.evaluate(proposal)).rejects.toMatchObject({ code: 'db_unavailable' });
    expect((await audit.events('t-1')).map((event) => event.type)).not.toContain('policy_error');
  });

  it('still denies (policy_error) when a rule fails for any other reason', async () => {
    const engine = new PolicyEngine({
      rules: [
        policyRule({
          id: 'broken',
          name: 'Broken rule',
          priority: 100,
          evaluate: () => {
            throw new Error('bug in the rule');
          },
        }),
      ],
    });
    const proposal = buildToolProposal({
      tool,
      arguments: {},
      threadId: 't-2',
      runId: 'r-2',
      toolCallId: 'call_1',
      proposer: 'payout-bot',
    });
    expect(await engine.evaluate(proposal)).toMatchObject({
      verdict: 'deny',
      code: 'policy_error',
    });
  });

  it('leaves an approved call resumable in a graph, and runs it once the database is back', async () => {
    let down = false;
    const limits = policyRule({
      id: 'limits.daily',
      name: 'Daily limit',
      priority: 100,
      appliesTo: ['tool'],
      evaluate: () => {
        if (down) throw outage();
        return undefined;
      },
    });
    const { graph, ledger } = buildGovernedGraph(
      [
        {
          toolCalls: [
            { name: 'transfer', args: { to: 'acme', amount: '500.00', currency: 'USD' } },
          ],
        },
        'Paid.',
      ],
      { rules: [limits] },
    );
    const config = { configurable: { thread_id: 'outage' } };
    const first = await graph.invoke({ messages: [new HumanMessage('pay')] }, config);
    const [request] = (
      first as unknown as {
        __interrupt__: Array<{
          value: { approvals: Array<{ approvalId: string; proposalHash: string }> };
        }>;
      }
    ).__interrupt__[0]!.value.approvals;
    down = true;
    const failed = await graph
      .invoke(new Command({ resume: signAs(request!, 'alice') }), config)
      .catch((error: unknown) => error);
    expect(VeridexError.is(failed, 'db_unavailable'), String(failed)).toBe(true);
    expect(ledger.transfers).toHaveLength(0);
    expect(isThreadFinished(await graph.getState(config))).toBe(false);
    down = false;
    const done = await graph.invoke(new Command({ resume: signAs(request!, 'alice') }), config);
    expect(done.messages.at(-1)?.content).toBe('Paid.');
    expect(ledger.transfers).toHaveLength(1);
  });
});
