import { type AIMessage, HumanMessage, type ToolMessage } from '@langchain/core/messages';
import {
  type BaseCheckpointSaver,
  Command,
  END,
  MemorySaver,
  MessagesAnnotation,
  START,
  StateGraph,
} from '@langchain/langgraph';
import { describe, expect, it } from 'vitest';
import { verifyEvidence } from '../../src/audit/index.js';
import { PostgresCheckpointer } from '../../src/checkpointer/index.js';
import {
  type ApprovalsInterrupt,
  governedToolNode,
  routeAfterTools,
} from '../../src/nodes/index.js';
import { PolicyEngine } from '../../src/policy/index.js';
import { type ScriptedTurn, scriptedModel, toMatchTrace } from '../../src/testing/index.js';
import { ListSanctionsScreener } from '../../src/treasury/index.js';
import { signAs, trustedApprovers } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';
import { ACME, type KitBackend, kitFixture, SANCTIONED, signer } from './kit-fixture.js';

expect.extend({ toMatchTrace });

const config = (threadId: string) => ({ configurable: { thread_id: threadId } });

function pending(result: object): ApprovalsInterrupt | undefined {
  return (result as { __interrupt__?: Array<{ value: ApprovalsInterrupt }> }).__interrupt__?.[0]
    ?.value;
}

async function treasuryGraph(backend: KitBackend, checkpointer: BaseCheckpointSaver) {
  const f = await kitFixture({
    backend,
    sanctions: new ListSanctionsScreener({
      addresses: [SANCTIONED.toLowerCase()],
      source: 'OFAC SDN',
    }),
    kit: {
      policy: { dualApprovalThreshold: { USD: '10000.00' }, dailyLimit: { USD: '250000.00' } },
    },
  });
  const policy = new PolicyEngine({ rules: f.kit.policyRules, audit: f.audit });
  const tools = governedToolNode({
    tools: f.kit.tools,
    policy,
    approvals: f.approvals,
    audit: f.audit,
    idempotency: f.kit.idempotency,
    agentId: f.kit.agentId,
  });
  const build = (turns: ScriptedTurn[]) => {
    const model = scriptedModel(turns);
    return new StateGraph(MessagesAnnotation)
      .addNode('model', async (state) => ({ messages: [await model.invoke(state.messages)] }))
      .addNode('tools', tools)
      .addNode('evidence', f.kit.nodes.evidence)
      .addEdge(START, 'model')
      .addConditionalEdges('model', (state) =>
        (state.messages.at(-1) as AIMessage).tool_calls?.length ? 'tools' : 'evidence',
      )
      .addConditionalEdges('tools', routeAfterTools('model'), ['model', END])
      .addEdge('evidence', END)
      .compile({ checkpointer });
  };
  return { ...f, build };
}

function graphSuite(backend: () => KitBackend, checkpointer: () => BaseCheckpointSaver) {
  it('suspends $50,000 to Acme for dual approval, refuses the proposer, pays once after alice and bob', async () => {
    const f = await treasuryGraph(backend(), checkpointer());
    const graph = f.build([
      { toolCalls: [{ name: 'get_balance', args: { currency: 'USD' } }] },
      {
        toolCalls: [
          {
            name: 'transfer',
            args: {
              to: ACME,
              amount: '50000.00',
              currency: 'USD',
              memo: 'Acme Suppliers INV-1234',
            },
          },
        ],
      },
      'Paid Acme Suppliers $50,000.',
    ]);
    const prompt =
      'Pay $50,000 USD to Acme Suppliers (Address: 0x90F8bf9A1C437435f3065A5A90310243E197c3b2).';
    const first = await graph.invoke({ messages: [new HumanMessage(prompt)] }, config('payout'));
    const request = pending(first)?.approvals[0];
    expect(request).toMatchObject({
      tool: 'transfer',
      route: 'dual_approval',
      ruleId: 'treasury.dual_approval_threshold',
      requiredApprovals: 2,
      approvals: [],
    });
    expect(await f.executions()).toBe(0);
    const decide = (approver: string) =>
      graph.invoke(new Command({ resume: signAs(request!, approver) }), config('payout'));

    const byProposer = await decide('payout-bot');
    expect(pending(byProposer)?.approvals[0]?.approvals).toEqual([]);
    const afterAlice = await decide('alice@company.com');
    expect(pending(afterAlice)?.approvals[0]?.approvals.map((a) => a.approver)).toEqual([
      'alice@company.com',
    ]);
    expect(await f.executions()).toBe(0);
    const done = await decide('bob@company.com');
    expect(pending(done)).toBeUndefined();
    expect(done.messages.at(-1)?.content).toBe('Paid Acme Suppliers $50,000.');
    const answer = done.messages.find(
      (m) => m.getType() === 'tool' && (m as ToolMessage).name === 'transfer',
    ) as ToolMessage;
    expect(answer.status).toBe('success');
    expect(JSON.parse(String(answer.content))).toMatchObject({
      status: 'executed',
      amount: '50000.00',
    });

    expect(await f.executions()).toBe(1);
    const usage = await f.kit.ceilings.usage('USD');
    expect(usage.committed.amount).toBe(5_000_000n);
    expect(usage.remaining?.amount).toBe(20_000_000n);

    const security = (await f.audit.events('payout')).filter((e) => e.type === 'security_event');
    expect(security.map((e) => e.payload.kind)).toEqual(['proposer_cannot_approve']);

    const { bundle } = await f.kit.sealEvidence('payout');
    const verified = verifyEvidence(JSON.parse(JSON.stringify(bundle)), {
      keys: [signer],
      approvers: trustedApprovers(['alice@company.com', 'bob@company.com']),
    });
    expect(verified.valid).toBe(true);
    const events = verified.body!.events;
    const payloads = (type: string) => events.filter((e) => e.type === type).map((e) => e.payload);
    expect(payloads('balance_checked').map((p) => p.via)).toEqual(['get_balance', 'transfer']);
    expect(payloads('counterparty_screened')).toEqual([
      expect.objectContaining({ status: 'clear', source: 'OFAC SDN' }),
    ]);
    expect(payloads('policy_decision')).toContainEqual(
      expect.objectContaining({
        toolName: 'transfer',
        verdict: 'escalate',
        route: 'dual_approval',
      }),
    );
    expect(payloads('approval_decided').map((p) => p.approver)).toEqual([
      'alice@company.com',
      'bob@company.com',
    ]);
    expect(payloads('approval_resolved')).toEqual([
      expect.objectContaining({
        status: 'approved',
        approvers: ['alice@company.com', 'bob@company.com'],
      }),
    ]);
    expect(payloads('transfer_executed')).toEqual([
      expect.objectContaining({
        approvedBy: ['alice@company.com', 'bob@company.com'],
        receipt: expect.objectContaining({ reference: expect.stringMatching(/^0x[0-9a-f]{64}$/) }),
      }),
    ]);
    expect(payloads('ceiling_committed')).toEqual([
      expect.objectContaining({ amount: expect.objectContaining({ amount: '50000.00' }) }),
    ]);
    expect(events.at(-1)?.type).toBe('run_completed');
    // The whole sequence — proposals, verdicts, routes, approvers, outcomes — against the
    // reviewed golden trace: a change in policy order or outcome fails here with a diff.
    expect(await f.audit.events('payout')).toMatchTrace('__traces__/treasury-payout.trace.json');

    // A payment to a sanctioned address is denied before any approval is requested.
    const sanctioned = f.build([
      {
        toolCalls: [
          { name: 'transfer', args: { to: SANCTIONED, amount: '50000.00', currency: 'USD' } },
        ],
      },
      'I cannot pay that address.',
    ]);
    const refused = await sanctioned.invoke(
      { messages: [new HumanMessage('Pay them.')] },
      config('sanctioned'),
    );
    expect(pending(refused)).toBeUndefined();
    const denial = refused.messages.find((m) => m.getType() === 'tool') as ToolMessage;
    expect(denial.status).toBe('error');
    expect(denial.content).toMatch(/^Error \[sanctions_hit\]: .*OFAC SDN/);
    expect(await f.approvals.listByThread('sanctioned')).toEqual([]);
    const types = (await f.audit.events('sanctioned')).map((e) => e.type);
    expect(types).not.toContain('approval_requested');
    expect(types).toContain('policy_decision');
    expect(await f.executions()).toBe(1);
    expect(await f.audit.events('sanctioned')).toMatchTrace(
      '__traces__/treasury-sanctioned.trace.json',
    );
  });
}

describe('treasury kit in a real StateGraph [memory, MemorySaver]', () =>
  graphSuite(
    () => ({ kind: 'memory' }),
    () => new MemorySaver(),
  ));

describeEachDatabase('treasury kit in a real StateGraph with PostgresCheckpointer', ({ db }) =>
  graphSuite(
    () => ({ kind: 'database', db: db() }),
    () => PostgresCheckpointer.fromDatabase(db()),
  ),
);
