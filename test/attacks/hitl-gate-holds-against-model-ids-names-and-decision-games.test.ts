// Controls of the createAgent middleware's approval gate (README "Approvals in LangChain's HITL
// protocol"): attacks by the model (odd tool names, reused and duplicate call ids, many calls),
// by whoever resumes (reordered and replayed decisions) and by operator typos that the gate
// does stop. The attacks on it that still work are in the `*.open-attack.ts` files beside this.
import { tool as langchainTool } from '@langchain/core/tools';
import { Command, MemorySaver } from '@langchain/langgraph';
import { createAgent } from 'langchain';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApprovalManager } from '../../src/approvals/index.js';
import { AuditLog } from '../../src/audit/index.js';
import { governanceMiddleware } from '../../src/middleware/index.js';
import { resumeThread } from '../../src/nodes/index.js';
import { PolicyEngine, rules } from '../../src/policy/index.js';
import { type ScriptedTurn, scriptedModel } from '../../src/testing/index.js';
import { tool } from '../../src/tools/index.js';
import { signAs, TEST_APPROVERS, testApproverInits } from '../support/approvers.js';
import {
  type AgentResult,
  buildHitlAgent,
  type HitlAgent,
  interruptsOf,
  newThread,
  sharedState,
  toolMessages,
  user,
} from '../support/hitl-agent.js';

const email = (id = 'e1') => ({
  id,
  name: 'send_email',
  args: { to: 'bob@example.com', body: 'hi' },
});
const refund = (id: string, order = 'A-1', amount = '50.00') => ({
  id,
  name: 'refund',
  args: { order, amount },
});
const codeOf = (content: unknown) => /\[(\w+)\]/.exec(String(content))?.[1] ?? 'ok';

describe('the model cannot get around the approval gate', () => {
  for (const name of [
    'constructor',
    '__proto__',
    'toString',
    'hasOwnProperty',
    'r\u0435fund',
    'delete_db',
  ]) {
    it(`a call to ${JSON.stringify(name)} is not found, and the turn still waits for its approval`, async () => {
      const { agent, ran } = buildHitlAgent([
        { toolCalls: [{ id: 'odd', name, args: { order: 'A-1', amount: '1.00' } }, email()] },
        'ok',
      ]);
      const config = newThread();
      const value = interruptsOf(await agent.invoke(user('go'), config))[0]!;
      expect(value.actionRequests.map((action) => action.name)).toEqual(['send_email']);
      expect(ran).toEqual({ refunds: [], emails: [], searches: 0 });
      const done = await agent.invoke(
        new Command({ resume: [signAs(value.approvals[0]!, 'alice')] }),
        config,
      );
      expect(toolMessages(done).find((m) => m.tool_call_id === 'odd')?.content).toMatch(
        /not found/,
      );
      expect(ran).toEqual({ refunds: [], emails: [email().args], searches: 0 });
    });
  }

  it('a call whose id an earlier turn already answered never runs, and needs no approval to be skipped', async () => {
    const { agent, ran } = buildHitlAgent([
      { toolCalls: [{ id: 'c1', name: 'search', args: { q: 'x' } }] },
      { toolCalls: [refund('c1', 'A-9', '5000.00'), email('c2')] },
      'ok',
    ]);
    const config = newThread();
    const value = interruptsOf(await agent.invoke(user('go'), config))[0]!;
    expect(value.actionRequests.map((action) => action.toolCallId)).toEqual(['c2']);
    await agent.invoke(new Command({ resume: [signAs(value.approvals[0]!, 'alice')] }), config);
    expect(ran.refunds).toEqual([]);
    expect(ran.emails).toHaveLength(1);
  });

  it('two calls of a turn under one id: only the call the reviewers saw can run', async () => {
    const { agent, ran } = buildHitlAgent([
      { toolCalls: [refund('dup', 'A-1', '5.00'), refund('dup', 'A-2', '5000.00')] },
      'ok',
    ]);
    const config = newThread();
    const value = interruptsOf(await agent.invoke(user('go'), config))[0]!;
    expect(value.actionRequests.map((action) => action.args)).toEqual([
      { order: 'A-1', amount: '5.00' },
    ]);
    await agent.invoke(
      new Command({ resume: value.approvals.map((approval) => signAs(approval, 'alice')) }),
      config,
    );
    expect(ran.refunds).toEqual([{ order: 'A-1', amount: '5.00' }]);
  });

  it('two identical calls under one id run once', async () => {
    const { agent, ran } = buildHitlAgent([{ toolCalls: [email('dup'), email('dup')] }, 'ok']);
    const config = newThread();
    const value = interruptsOf(await agent.invoke(user('go'), config))[0]!;
    await agent.invoke(new Command({ resume: [signAs(value.approvals[0]!, 'alice')] }), config);
    expect(ran.emails).toHaveLength(1);
  });

  it('150 calls in one turn: one interrupt listing them all, none runs before they are decided', async () => {
    const calls = Array.from({ length: 150 }, (_, index) => ({
      ...email(`m${index}`),
      args: { to: `user${index}@example.com`, body: 'hi' },
    }));
    const { agent, ran } = buildHitlAgent([{ toolCalls: [...calls, refund('r1')] }, 'ok']);
    const result = await agent.invoke(user('go'), newThread());
    expect(interruptsOf(result)).toHaveLength(1);
    expect(interruptsOf(result)[0]!.actionRequests).toHaveLength(151);
    expect(ran).toEqual({ refunds: [], emails: [], searches: 0 });
  });

  it("a turn mixing the middleware's governed tool and createAgent's tools: none runs before all are decided", async () => {
    const transfers: string[] = [];
    const transfer = tool({
      name: 'transfer',
      description: 'Sends money.',
      safetyClass: 'financial',
      input: z.object({ to: z.string(), amount: z.string() }),
      output: z.object({ ok: z.boolean() }),
      async execute({ input }) {
        transfers.push(input.amount);
        return { ok: true };
      },
    });
    const { agent, ran } = buildHitlAgent(
      [
        {
          toolCalls: [
            { id: 't1', name: 'transfer', args: { to: 'acme', amount: '10.00' } },
            refund('r1'),
            { id: 's1', name: 'search', args: { q: 'x' } },
          ],
        },
        'ok',
      ],
      { tools: [transfer] },
    );
    const config = newThread();
    const value = interruptsOf(await agent.invoke(user('go'), config))[0]!;
    expect(value.actionRequests.map((action) => action.name)).toEqual(['transfer', 'refund']);
    const partial = await agent.invoke(
      new Command({ resume: [signAs(value.approvals[0]!, 'alice')] }),
      config,
    );
    expect(interruptsOf(partial)[0]?.actionRequests.map((action) => action.name)).toEqual([
      'refund',
    ]);
    expect(transfers).toEqual([]);
    expect(ran).toEqual({ refunds: [], emails: [], searches: 0 });
    await agent.invoke(new Command({ resume: [signAs(value.approvals[1]!, 'bob')] }), config);
    expect(transfers).toEqual(['10.00']);
    expect(ran.refunds).toHaveLength(1);
    expect(ran.searches).toBe(1);
  });
});

describe('agent tools whose names are Object.prototype members', () => {
  for (const name of ['constructor', 'toString', 'hasOwnProperty', 'valueOf']) {
    it(`a tool named ${JSON.stringify(name)} keeps its review entry and its class`, async () => {
      const ran: string[] = [];
      const audit = new AuditLog();
      const approvals = new ApprovalManager({
        audit,
        approvers: testApproverInits([...TEST_APPROVERS]),
      });
      const own = (value: unknown) =>
        Object.defineProperty({}, name, { value, enumerable: true, writable: true });
      const agent = createAgent({
        model: scriptedModel([{ toolCalls: [{ id: 'q1', name, args: { order: 'A-1' } }] }, 'ok']),
        tools: [
          langchainTool(
            async (args: { order: string }) => {
              ran.push(args.order);
              return 'done';
            },
            { name, description: 'Refunds.', schema: z.object({ order: z.string() }) },
          ),
        ],
        middleware: [
          governanceMiddleware({
            audit,
            approvals,
            safetyClasses: own('financial') as never,
            review: own({ allowedDecisions: ['approve', 'reject'], description: 'CHECK' }) as never,
          }),
        ] as never,
        checkpointer: new MemorySaver(),
      }) as unknown as HitlAgent;
      const config = newThread();
      const value = interruptsOf(await agent.invoke(user('go'), config))[0]!;
      expect(value.actionRequests[0]?.description).toBe('CHECK');
      expect(value.reviewConfigs[0]?.allowedDecisions).toEqual(['approve', 'reject']);
      const edited = await agent.invoke(
        new Command({
          resume: [signAs(value.approvals[0]!, 'alice', 'edit', { editedArgs: { order: 'Z' } })],
        }),
        config,
      );
      expect(interruptsOf(edited)[0]?.approvals[0]?.refusals.map((r) => r.code)).toEqual([
        'decision_not_allowed',
      ]);
      expect(ran).toEqual([]);
    });
  }
});

describe('decisions count for the call they were signed for', () => {
  it('signed decisions in another order than the action requests decide the calls they name', async () => {
    const { agent, ran } = buildHitlAgent([
      { toolCalls: [refund('r1', 'A-1', '5.00'), refund('r2', 'A-2', '5000.00')] },
      'ok',
    ]);
    const config = newThread();
    const [small, large] = interruptsOf(await agent.invoke(user('go'), config))[0]!.approvals;
    await agent.invoke(
      new Command({
        resume: {
          decisions: [
            { type: 'reject', ...signAs(large!, 'alice', 'reject') },
            { type: 'approve', ...signAs(small!, 'alice') },
          ],
        },
      }),
      config,
    );
    expect(ran.refunds).toEqual([{ order: 'A-1', amount: '5.00' }]);
  });

  it("a stale client replaying the last turn's resume at the next turn's interrupt decides nothing", async () => {
    const { agent, ran } = buildHitlAgent([
      { toolCalls: [refund('r1', 'A-1', '5.00')] },
      { toolCalls: [refund('r2', 'A-2', '5000.00')] },
      'ok',
    ]);
    const config = newThread();
    const [first] = interruptsOf(await agent.invoke(user('go'), config))[0]!.approvals;
    const resume = { decisions: [{ type: 'approve', ...signAs(first!, 'alice') }] };
    const next = await agent.invoke(new Command({ resume }), config);
    expect(interruptsOf(next)[0]?.actionRequests[0]?.args).toEqual({
      order: 'A-2',
      amount: '5000.00',
    });
    const replayed = await agent.invoke(new Command({ resume }), config);
    expect(interruptsOf(replayed)[0]?.refusals.map((refusal) => refusal.code)).toEqual([
      'approval_not_found',
    ]);
    expect(ran.refunds).toEqual([{ order: 'A-1', amount: '5.00' }]);
  });

  it('an approve made out of band on a tool whose review does not allow approving clears nothing', async () => {
    const { agent, ran, approvals } = buildHitlAgent([{ toolCalls: [refund('r1')] }, 'ok'], {
      review: { refund: { allowedDecisions: ['edit', 'reject'] } },
    });
    const config = newThread();
    const [approval] = interruptsOf(await agent.invoke(user('go'), config))[0]!.approvals;
    await approvals.decide(approval!.approvalId, signAs(approval!, 'bob'));
    const done = await agent.invoke(new Command({ resume: { type: 'veridex.recheck' } }), config);
    expect(ran.refunds).toEqual([]);
    expect(codeOf(toolMessages(done)[0]?.content)).toBe('decision_not_allowed');
  });

  it("onRejection 'return_to_model' with an edit and a reject: no call of the turn runs", async () => {
    const { agent, ran, model } = buildHitlAgent(
      [
        { toolCalls: [refund('r1'), email(), { id: 's1', name: 'search', args: { q: 'x' } }] },
        'ok',
      ],
      { onRejection: 'return_to_model' },
    );
    const config = newThread();
    const [r, e] = interruptsOf(await agent.invoke(user('go'), config))[0]!.approvals;
    const edited = { order: 'A-1', amount: '20.00' };
    let result: AgentResult = await agent.invoke(
      new Command({
        resume: {
          decisions: [
            {
              type: 'edit',
              editedAction: { name: 'refund', args: edited },
              ...signAs(r!, 'alice', 'edit', { editedArgs: edited }),
            },
            { type: 'reject', ...signAs(e!, 'bob', 'reject') },
          ],
        },
      }),
      config,
    );
    // The edited refund is a new proposal; approving it does not revive the rejected turn.
    const again = interruptsOf(result)[0]?.approvals[0];
    if (again) {
      result = await agent.invoke(new Command({ resume: [signAs(again, 'bob')] }), config);
    }
    expect(ran).toEqual({ refunds: [], emails: [], searches: 0 });
    expect(toolMessages(result).map((message) => codeOf(message.content))).toEqual([
      'turn_rejected',
      'approval_rejected',
      'turn_rejected',
    ]);
    expect(model.calls).toHaveLength(2);
  });
});

describe('operator typos the middleware refuses', () => {
  it.each([
    ['onRejection spelt with a hyphen', { onRejection: 'return-to-model' as never }],
    ['a review entry in interruptOn style', { review: { send_email: true as never } }],
    [
      'an allowed decision in the wrong case',
      { review: { refund: { allowedDecisions: ['Approve' as never] } } },
    ],
    ['an empty allowed-decisions list', { review: { refund: { allowedDecisions: [] } } }],
  ])('%s is config_invalid', (_label, options) => {
    expect(() => buildHitlAgent(['ok'], options)).toThrow(
      expect.objectContaining({ code: 'config_invalid' }),
    );
  });

  it('a description factory that throws stops the step with nothing run; a fixed process resumes the thread', async () => {
    const shared = sharedState();
    const turns: ScriptedTurn[] = [
      { toolCalls: [refund('r1'), { id: 's1', name: 'search', args: { q: 'x' } }] },
      'ok',
    ];
    const config = newThread();
    const broken = buildHitlAgent(
      turns,
      {
        review: {
          refund: {
            description: () => {
              throw new Error('description bug');
            },
          },
        },
      },
      shared,
    );
    await expect(broken.agent.invoke(user('go'), config)).rejects.toThrow(/description bug/);
    expect(broken.ran).toEqual({ refunds: [], emails: [], searches: 0 });
    const fixed = buildHitlAgent(turns, {}, shared);
    const resumed = (await resumeThread(
      fixed.agent as never,
      config.configurable.thread_id,
    )) as AgentResult;
    expect(interruptsOf(resumed)[0]?.actionRequests.map((action) => action.name)).toEqual([
      'refund',
    ]);
    expect(fixed.ran).toEqual({ refunds: [], emails: [], searches: 0 });
  });

  it('rules.requireApproval refuses an empty list', () => {
    expect(() => rules.requireApproval({ tools: [] })).toThrow(/at least one tool/);
    expect(() => new PolicyEngine({ rules: [rules.requireApproval({ tools: [''] })] })).toThrow(
      /at least one tool/,
    );
  });
});
