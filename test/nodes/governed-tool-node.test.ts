import { AIMessage, HumanMessage, type ToolMessage } from '@langchain/core/messages';
import { Command, interrupt } from '@langchain/langgraph';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AuditLog } from '../../src/audit/index.js';
import {
  type ApprovalsInterrupt,
  governedToolNode,
  type PendingApproval,
  resumeThread,
} from '../../src/nodes/index.js';
import { PolicyEngine, policyRule, rules } from '../../src/policy/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { tool } from '../../src/tools/index.js';
import { signAs } from '../support/approvers.js';
import { buildGovernedGraph } from './governed-graph.js';

const config = (threadId: string) => ({ configurable: { thread_id: threadId } });
const pay = (amount: string, id?: string) => ({
  name: 'transfer',
  args: { to: 'acme', amount, currency: 'USD' },
  ...(id ? { id } : {}),
});

function pendingOf(result: object): ApprovalsInterrupt {
  const value = (result as { __interrupt__?: Array<{ value: unknown }> }).__interrupt__?.[0]
    ?.value as ApprovalsInterrupt | undefined;
  if (!value) throw new Error('expected the graph to be suspended on approvals');
  return value;
}

function toolMessages(result: { messages: unknown[] }): ToolMessage[] {
  return (result.messages as ToolMessage[]).filter((message) => message.getType() === 'tool');
}

async function securityKinds(audit: AuditLog, threadId: string) {
  return (await audit.events(threadId))
    .filter((event) => event.type === 'security_event')
    .map((event) => event.payload.kind);
}

/** Resumes `threadId` with one signed approval, as an approver would through the graph. */
function approve(
  graph: ReturnType<typeof buildGovernedGraph>['graph'],
  threadId: string,
  pending: PendingApproval,
  approver: string,
) {
  return graph.invoke(new Command({ resume: signAs(pending, approver) }), config(threadId));
}

/** A read tool that asks the operator through LangGraph's own `interrupt()`. */
function askHumanTool() {
  return tool({
    name: 'ask_human',
    description: 'Ask the operator a question.',
    safetyClass: 'read',
    input: z.object({ question: z.string() }),
    output: z.object({ answer: z.string() }),
    async execute({ input }) {
      return { answer: String(interrupt({ question: input.question })) };
    },
  });
}

describe('governedToolNode', () => {
  it('runs an allowed read call once and answers with a ToolMessage', async () => {
    const { graph, ledger, audit } = buildGovernedGraph([
      { toolCalls: [{ name: 'get_balance', args: { currency: 'USD' } }] },
      'done',
    ]);
    const result = await graph.invoke(
      { messages: [new HumanMessage('balance?')] },
      config('t-read'),
    );
    expect(ledger.balanceReads).toBe(1);
    const [message] = toolMessages(result);
    expect(message?.status).toBe('success');
    expect(JSON.parse(String(message?.content))).toEqual({ amount: '1000000.00', currency: 'USD' });
    const types = (await audit.events('t-read')).map((event) => event.type);
    expect(types).toEqual(['tool_proposed', 'policy_decision', 'tool_executed']);
  });

  it('turns a denied call into an error message the model reads, without running it', async () => {
    const { graph, ledger } = buildGovernedGraph(
      [{ toolCalls: [{ name: 'get_balance', args: { currency: 'USD' } }] }, 'ok'],
      {
        rules: [rules.denyTools(['get_balance'])],
      },
    );
    const result = await graph.invoke(
      { messages: [new HumanMessage('balance?')] },
      config('t-deny'),
    );
    expect(ledger.balanceReads).toBe(0);
    const [message] = toolMessages(result);
    expect(message?.status).toBe('error');
    expect(message?.content).toMatch(/policy_denied.*deny list.*rule deny_tools/);
    expect(result.messages.at(-1)?.content).toBe('ok');
  });

  it('answers unknown tools and invalid arguments with error messages', async () => {
    const { graph, audit } = buildGovernedGraph([
      {
        toolCalls: [
          { name: 'launch_rockets', args: {} },
          { name: 'get_balance', args: { currency: 7 } },
        ],
      },
      'sorry',
    ]);
    const result = await graph.invoke({ messages: [new HumanMessage('go')] }, config('t-bad'));
    const [unknown, invalid] = toolMessages(result);
    // The tool's own failures read as ToolNode words them; the code rides in additional_kwargs.
    expect(unknown?.content).toBe(
      'Error: Tool "launch_rockets" not found.\n Please fix your mistakes.',
    );
    expect(unknown?.additional_kwargs.veridex_code).toBe('tool_not_found');
    expect(invalid?.content).toMatch(/^Error: .*currency[\s\S]*Please fix your mistakes\.$/);
    expect(invalid?.additional_kwargs.veridex_code).toBe('input_invalid');
    expect(
      (await audit.events('t-bad')).filter((event) => event.type === 'tool_failed'),
    ).toHaveLength(2);
  });

  it('suspends a financial call for dual approval and executes it exactly once after two approvers', async () => {
    const { graph, ledger, audit } = buildGovernedGraph([{ toolCalls: [pay('50000.00')] }, 'paid']);
    const first = await graph.invoke(
      { messages: [new HumanMessage('pay acme')] },
      config('t-dual'),
    );
    const pending = pendingOf(first);
    expect(pending.approvals).toHaveLength(1);
    const [approval] = pending.approvals;
    expect(approval).toMatchObject({
      tool: 'transfer',
      arguments: { to: 'acme', amount: '50000.00', currency: 'USD' },
      safetyClass: 'financial',
      route: 'dual_approval',
      ruleId: 'argument_threshold.amount',
      requiredApprovals: 2,
      approvals: [],
    });
    expect(approval?.proposalHash).toMatch(/^[0-9a-f]{64}$/);
    expect(ledger.transfers).toHaveLength(0);

    const afterAlice = await approve(graph, 't-dual', approval!, 'alice');
    expect(pendingOf(afterAlice).approvals[0]?.approvals.map((a) => a.approver)).toEqual(['alice']);
    const afterRepeat = await approve(graph, 't-dual', approval!, 'alice');
    expect(pendingOf(afterRepeat).approvals[0]?.approvals).toHaveLength(1);
    // The caller learns why the repeat did not count.
    expect(pendingOf(afterRepeat).approvals[0]?.refusals).toEqual([
      expect.objectContaining({ code: 'approver_duplicate', approver: 'alice' }),
    ]);
    expect(ledger.transfers).toHaveLength(0);

    const done = await approve(graph, 't-dual', approval!, 'bob');
    expect('__interrupt__' in done).toBe(false);
    expect(done.messages.at(-1)?.content).toBe('paid');
    expect(ledger.transfers).toHaveLength(1);
    expect(ledger.transfers[0]?.approvedBy).toEqual(['alice', 'bob']);
    expect(await securityKinds(audit, 't-dual')).toEqual(['approver_duplicate']);
  });

  it('does not let one resume payload of bare names complete a dual approval, and says why', async () => {
    const { graph, ledger } = buildGovernedGraph([{ toolCalls: [pay('50000.00')] }, 'paid']);
    const [approval] = pendingOf(
      await graph.invoke({ messages: [new HumanMessage('pay')] }, config('t-bare')),
    ).approvals;
    const approvalId = approval!.approvalId;
    const result = await graph.invoke(
      new Command({
        resume: [
          { approvalId, decision: 'approve', approver: 'alice' },
          { approvalId, decision: 'approve', approver: 'bob' },
          { approvalId: 'apr_elsewhere', decision: 'approve', approver: 'carol' },
        ],
      }),
      config('t-bare'),
    );
    const still = pendingOf(result);
    expect(still.approvals[0]?.approvals).toEqual([]);
    expect(still.approvals[0]?.refusals.map((r) => [r.approver, r.code])).toEqual([
      ['alice', 'decision_unsigned'],
      ['bob', 'decision_unsigned'],
    ]);
    expect(still.refusals).toEqual([
      expect.objectContaining({ approvalId: 'apr_elsewhere', code: 'approval_not_found' }),
    ]);
    expect(ledger.transfers).toHaveLength(0);
  });

  it('refuses to resume a thread that never ran or is not waiting for approvals', async () => {
    const { graph } = buildGovernedGraph([{ toolCalls: [pay('10.00')] }, 'ok']);
    await expect(resumeThread(graph, 'no-such-thread')).rejects.toMatchObject({
      code: 'thread_not_found',
    });
    const { graph: reads } = buildGovernedGraph([
      { toolCalls: [{ name: 'get_balance', args: { currency: 'USD' } }] },
      'done',
    ]);
    await reads.invoke({ messages: [new HumanMessage('balance?')] }, config('t-finished'));
    await expect(resumeThread(reads, 't-finished')).rejects.toMatchObject({
      code: 'thread_not_suspended',
    });
  });

  it('executes approved parallel calls once across every resume (the upstream re-execution bug)', async () => {
    const { graph, ledger } = buildGovernedGraph([
      {
        toolCalls: [
          { name: 'get_balance', args: { currency: 'USD' } },
          pay('20000.00', 'c_big'),
          pay('500.00', 'c_small'),
        ],
      },
      'all done',
    ]);
    const first = await graph.invoke({ messages: [new HumanMessage('pay both')] }, config('t-par'));
    // One interrupt lists both escalations: dual approval above the threshold, one human below.
    const [big, small] = pendingOf(first).approvals;
    expect([big?.route, small?.route]).toEqual(['dual_approval', 'human_required']);
    const resumes = [[signAs(big!, 'alice'), signAs(small!, 'alice')], [signAs(big!, 'bob')]];
    for (const resume of resumes) {
      expect(ledger.transfers).toHaveLength(0);
      expect(ledger.balanceReads).toBe(0);
      await graph.invoke(new Command({ resume }), config('t-par'));
    }
    // Re-invoking the finished thread re-runs nothing.
    await graph.invoke(new Command({ resume: [] }), config('t-par')).catch(() => undefined);
    const state = await graph.getState(config('t-par'));
    expect(state.next).toEqual([]);
    expect(state.values.messages.at(-1)?.content).toBe('all done');
    expect(ledger.balanceReads).toBe(1);
    expect(ledger.transfers.map((transfer) => transfer.amount).sort()).toEqual([
      '20000.00',
      '500.00',
    ]);
  });

  it('refuses the proposer, forged ids and malformed payloads, and stays resumable', async () => {
    const { graph, ledger, audit } = buildGovernedGraph([{ toolCalls: [pay('50.00')] }, 'paid']);
    const pending = pendingOf(
      await graph.invoke({ messages: [new HumanMessage('pay')] }, config('t-red')),
    ).approvals[0]!;
    const approvalId = pending.approvalId;
    for (const resume of [
      signAs(pending, 'payout-bot'),
      signAs(
        { approvalId: 'apr_forged0000000000000000', proposalHash: pending.proposalHash },
        'alice',
      ),
      'approve it please',
      [{ decision: 'approve' }],
      { approvalId, decision: 'maybe', approver: 'alice' },
    ]) {
      const result = await graph.invoke(new Command({ resume }), config('t-red'));
      expect(pendingOf(result).approvals[0]?.approvalId).toBe(approvalId);
    }
    expect(ledger.transfers).toHaveLength(0);
    expect(await securityKinds(audit, 't-red')).toEqual([
      'proposer_cannot_approve',
      'approval_not_found',
      'resume_payload_invalid',
      'resume_payload_invalid',
      'resume_payload_invalid',
    ]);
    const done = await graph.invoke(
      new Command({ resume: signAs(pending, 'alice') }),
      config('t-red'),
    );
    expect(done.messages.at(-1)?.content).toBe('paid');
    expect(ledger.transfers).toHaveLength(1);
  });

  it('denies a call whose arguments were changed in state after approval was requested', async () => {
    const { graph, ledger, audit } = buildGovernedGraph([
      { toolCalls: [pay('50.00', 'c_mut')] },
      'noted',
    ]);
    const pending = pendingOf(
      await graph.invoke({ messages: [new HumanMessage('pay')] }, config('t-mut')),
    );
    const state = await graph.getState(config('t-mut'));
    const original = state.values.messages.at(-1) as AIMessage;
    const forged = new AIMessage({
      id: original.id,
      content: '',
      tool_calls: [
        { ...original.tool_calls![0]!, args: { to: 'mallory', amount: '50.00', currency: 'USD' } },
      ],
    });
    await graph.updateState(config('t-mut'), { messages: [forged] });
    const result = await approve(graph, 't-mut', pending.approvals[0]!, 'alice');
    expect(ledger.transfers).toHaveLength(0);
    const message = toolMessages(result).find((m) => m.tool_call_id === 'c_mut');
    expect(message?.content).toMatch(/proposal_mutation_detected/);
    expect(await securityKinds(audit, 't-mut')).toContain('proposal_mutation_detected');
    expect(result.messages.at(-1)?.content).toBe('noted');
  });

  it('expires a request that waited too long, without running the call', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const { graph, ledger } = buildGovernedGraph(
      [{ toolCalls: [pay('50.00', 'c_exp')] }, 'too late'],
      { now: () => new Date(now) },
    );
    const pending = pendingOf(
      await graph.invoke({ messages: [new HumanMessage('pay')] }, config('t-exp')),
    );
    now += 25 * 60 * 60 * 1000;
    const result = await graph.invoke(
      new Command({
        resume: signAs(pending.approvals[0]!, 'alice', 'approve', { decidedAt: new Date(now) }),
      }),
      config('t-exp'),
    );
    expect(ledger.transfers).toHaveLength(0);
    expect(toolMessages(result)[0]?.content).toMatch(/approval_expired/);
  });

  it('rejects with the approver reason', async () => {
    const { graph, ledger } = buildGovernedGraph([{ toolCalls: [pay('50.00')] }, 'ok']);
    const pending = pendingOf(
      await graph.invoke({ messages: [new HumanMessage('pay')] }, config('t-rej')),
    );
    const result = await graph.invoke(
      new Command({
        resume: signAs(pending.approvals[0]!, 'alice', 'reject', { reason: 'unknown vendor' }),
      }),
      config('t-rej'),
    );
    expect(ledger.transfers).toHaveLength(0);
    expect(toolMessages(result)[0]?.content).toMatch(/approval_rejected.*alice: unknown vendor/);
  });

  it('re-evaluates edited arguments: edited below the threshold, one approval is enough', async () => {
    const { graph, ledger } = buildGovernedGraph([{ toolCalls: [pay('50000.00')] }, 'paid']);
    const pending = pendingOf(
      await graph.invoke({ messages: [new HumanMessage('pay')] }, config('t-edit')),
    );
    const edited = await graph.invoke(
      new Command({
        resume: signAs(pending.approvals[0]!, 'alice', 'edit', {
          editedArgs: { to: 'acme', amount: '5000.00', currency: 'USD' },
        }),
      }),
      config('t-edit'),
    );
    const revised = pendingOf(edited).approvals[0]!;
    expect(revised).toMatchObject({
      route: 'human_required',
      arguments: { amount: '5000.00' },
      requiredApprovals: 1,
    });
    expect(revised.approvalId).not.toBe(pending.approvals[0]!.approvalId);
    // Whoever edited the arguments proposed the new version: alice cannot approve her own edit.
    expect(revised.proposers).toEqual(['payout-bot', 'alice']);
    const selfApproved = await approve(graph, 't-edit', revised, 'alice');
    expect(pendingOf(selfApproved).approvals[0]?.refusals).toEqual([
      expect.objectContaining({ code: 'proposer_cannot_approve' }),
    ]);
    expect(ledger.transfers).toHaveLength(0);
    await approve(graph, 't-edit', revised, 'bob');
    expect(ledger.transfers.map((transfer) => transfer.amount)).toEqual(['5000.00']);
  });

  it('writes the proposal and policy decision of an edited call that is re-planned and denied', async () => {
    const sanctioned = policyRule({
      id: 'no-mallory',
      name: 'Sanctioned counterparty',
      priority: 50,
      evaluate: ({ proposal }) =>
        proposal.kind === 'tool' && proposal.arguments.to === 'mallory'
          ? { verdict: 'deny', reason: 'sanctioned counterparty' }
          : undefined,
    });
    const { graph, ledger, audit } = buildGovernedGraph(
      [{ toolCalls: [pay('50000.00', 'call_ed')] }, 'ok'],
      {
        rules: [
          sanctioned,
          rules.argumentThreshold({
            tools: ['transfer'],
            argument: 'amount',
            atLeast: '10000',
            route: 'dual_approval',
          }),
        ],
      },
    );
    const pending = pendingOf(
      await graph.invoke({ messages: [new HumanMessage('pay')] }, config('t-edit-deny')),
    );
    const result = await graph.invoke(
      new Command({
        resume: signAs(pending.approvals[0]!, 'alice', 'edit', {
          editedArgs: { to: 'mallory', amount: '50.00', currency: 'USD' },
        }),
      }),
      config('t-edit-deny'),
    );
    expect(toolMessages(result)[0]?.content).toMatch(/Policy denied "transfer": sanctioned/);
    expect(ledger.transfers).toHaveLength(0);
    const events = await audit.events('t-edit-deny');
    // Before the fix the edited version's planning events stayed in the planner's batch.
    expect(
      events
        .filter((event) => event.type === 'tool_proposed')
        .map((event) => event.payload.revision),
    ).toEqual([0, 1]);
    expect(
      events
        .filter((event) => event.type === 'policy_decision')
        .map((event) => event.payload.verdict),
    ).toEqual(['escalate', 'deny']);
  });

  it('resumes after decisions made through the ApprovalManager (resumeThread)', async () => {
    const { graph, ledger, approvals } = buildGovernedGraph([
      { toolCalls: [pay('50000.00')] },
      'paid',
    ]);
    const pending = pendingOf(
      await graph.invoke({ messages: [new HumanMessage('pay')] }, config('t-oob')),
    );
    const request = pending.approvals[0]!;
    await approvals.decide(request.approvalId, signAs(request, 'alice'));
    const halfway = await resumeThread(graph, 't-oob');
    expect(pendingOf(halfway).approvals[0]?.approvals.map((a) => a.approver)).toEqual(['alice']);
    await approvals.decide(request.approvalId, signAs(request, 'bob'));
    const done = await resumeThread(graph, 't-oob');
    expect(done.messages.at(-1)?.content).toBe('paid');
    expect(ledger.transfers).toHaveLength(1);
  });

  it('denies (fails closed) when a policy rule throws, and the run goes on', async () => {
    const broken = policyRule({
      id: 'flaky',
      name: 'Flaky lookup',
      priority: 99,
      evaluate: () => {
        throw new Error('sanctions feed down');
      },
    });
    const { graph, ledger, audit } = buildGovernedGraph(
      [{ toolCalls: [{ name: 'get_balance', args: { currency: 'USD' } }] }, 'ok'],
      { rules: [broken] },
    );
    const result = await graph.invoke({ messages: [new HumanMessage('go')] }, config('t-throw'));
    expect(ledger.balanceReads).toBe(0);
    expect(toolMessages(result)[0]?.content).toMatch(/policy_error.*sanctions feed down/);
    expect((await audit.events('t-throw')).map((event) => event.type)).toContain('policy_error');
  });

  it('ends the run when the tool budget is exhausted, with every call answered', async () => {
    const { graph, ledger, audit } = buildGovernedGraph(
      [
        { toolCalls: [{ name: 'get_balance', args: { currency: 'USD' } }] },
        { toolCalls: [{ name: 'get_balance', args: { currency: 'EUR' } }] },
        'never',
      ],
      { rules: [rules.callLimit({ perRun: 1 })] },
    );
    const result = await graph.invoke({ messages: [new HumanMessage('go')] }, config('t-budget'));
    expect(ledger.balanceReads).toBe(1);
    expect(result.messages.at(-1)?.getType()).toBe('tool');
    expect(result.messages.at(-1)?.content).toMatch(/budget_exhausted/);
    expect((await audit.events('t-budget')).map((event) => event.type)).toContain(
      'budget_exhausted',
    );
    expect((await graph.getState(config('t-budget'))).next).toEqual([]);
  });

  it('re-throws interrupts raised inside a tool untouched', async () => {
    const askHuman = askHumanTool();
    const { graph } = buildGovernedGraph(
      [{ toolCalls: [{ name: 'ask_human', args: { question: 'Which account?' } }] }, 'thanks'],
      { extraTools: [askHuman] },
    );
    const first = await graph.invoke({ messages: [new HumanMessage('go')] }, config('t-ask'));
    expect(
      (first as { __interrupt__?: Array<{ value: unknown }> }).__interrupt__?.[0]?.value,
    ).toEqual({ question: 'Which account?' });
    const done = await graph.invoke(new Command({ resume: 'operations' }), config('t-ask'));
    expect(JSON.parse(String(toolMessages(done)[0]?.content))).toEqual({ answer: 'operations' });
  });

  it('does not run an allowed call again when a sibling call interrupts and the node re-runs', async () => {
    const askHuman = askHumanTool();
    const { graph, ledger } = buildGovernedGraph(
      [
        {
          toolCalls: [
            { name: 'get_balance', args: { currency: 'USD' } },
            { name: 'ask_human', args: { question: 'Proceed?' } },
          ],
        },
        'ok',
      ],
      { extraTools: [askHuman] },
    );
    await graph.invoke({ messages: [new HumanMessage('go')] }, config('t-sibling'));
    expect(ledger.balanceReads).toBe(1);
    const done = await graph.invoke(new Command({ resume: 'yes' }), config('t-sibling'));
    expect(ledger.balanceReads).toBe(1);
    expect(toolMessages(done).map((message) => message.status)).toEqual(['success', 'success']);
  });

  it('turns an ordinary tool error into an error ToolMessage', async () => {
    const failing = tool({
      name: 'flaky',
      description: 'Fails.',
      safetyClass: 'read',
      input: z.object({}),
      output: z.object({ ok: z.boolean() }),
      async execute() {
        throw new Error('upstream 503');
      },
    });
    const { graph } = buildGovernedGraph(
      [{ toolCalls: [{ name: 'flaky', args: {} }] }, 'handled'],
      { extraTools: [failing] },
    );
    const result = await graph.invoke({ messages: [new HumanMessage('go')] }, config('t-fail'));
    expect(toolMessages(result)[0]).toMatchObject({ status: 'error' });
    expect(toolMessages(result)[0]?.content).toMatch(/upstream 503/);
    expect(result.messages.at(-1)?.content).toBe('handled');
  });

  it('works as the tools of createReactAgent', async () => {
    const audit = new AuditLog();
    const { testTools } = await import('./governed-graph.js');
    const ledger = { balanceReads: 0, transfers: [], rotations: 0 };
    const node = governedToolNode({
      tools: testTools(ledger),
      audit,
      policy: new PolicyEngine({ audit }),
    });
    const { MemorySaver } = await import('@langchain/langgraph');
    const agent = createReactAgent({
      llm: scriptedModel([
        { toolCalls: [{ name: 'get_balance', args: { currency: 'USD' } }] },
        'It is 1,000,000.00 USD.',
      ]),
      tools: node,
      checkpointer: new MemorySaver(),
    });
    const result = await agent.invoke(
      { messages: [new HumanMessage('balance?')] },
      config('t-react'),
    );
    expect(result.messages.at(-1)?.content).toBe('It is 1,000,000.00 USD.');
    expect(ledger.balanceReads).toBe(1);
    expect(node.tools.map((bound) => bound.name)).toEqual([
      'get_balance',
      'transfer',
      'rotate_key',
    ]);
  });
});
