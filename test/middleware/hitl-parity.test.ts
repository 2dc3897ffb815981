// LangChain's `humanInTheLoopMiddleware` protocol, as a createAgent user meets it with the
// tools given to `createAgent` itself (README "Approvals in LangChain's HITL protocol"): one
// interrupt per model turn holding every call that needs people, in call order; decisions in
// call order; per-tool allowed decisions, edit schema and description; `requireApproval` as
// `interruptOn`'s counterpart; HITL's "a rejection returns to the model". Where we differ on
// purpose (decisions are signed; an edit is a new proposal), the test says so.
import { type BaseMessage, type ToolCall, ToolMessage } from '@langchain/core/messages';
import { Command, MemorySaver } from '@langchain/langgraph';
import { createAgent } from 'langchain';
import { describe, expect, it } from 'vitest';
import { ApprovalManager } from '../../src/approvals/index.js';
import { AuditLog } from '../../src/audit/index.js';
import type { ApprovalsInterrupt, PendingApproval } from '../../src/governance/index.js';
import {
  type GovernanceMiddlewareOptions,
  governanceMiddleware,
} from '../../src/middleware/index.js';
import { resumeThread } from '../../src/nodes/index.js';
import { PolicyEngine, rules } from '../../src/policy/index.js';
import { type ScriptedTurn, scriptedModel } from '../../src/testing/index.js';
import { signAs, TEST_APPROVERS, testApproverInits } from '../support/approvers.js';
import { countingTools, type Ran } from '../support/hitl-agent.js';

const refund = (order: string, amount = '50.00'): Omit<ToolCall, 'id'> => ({
  name: 'refund',
  args: { order, amount },
});
const email = (to: string): Omit<ToolCall, 'id'> => ({
  name: 'send_email',
  args: { to, body: 'hello' },
});
const search = (q: string): Omit<ToolCall, 'id'> => ({ name: 'search', args: { q } });

interface Agent {
  invoke(input: unknown, config?: unknown): Promise<Result>;
  getState(config: unknown): Promise<{ values: unknown }>;
}
type Result = { messages: BaseMessage[]; __interrupt__?: Array<{ value: unknown }> };

function build(
  turns: ScriptedTurn[],
  middleware: Partial<GovernanceMiddlewareOptions> = {},
  shared?: { checkpointer: MemorySaver; audit: AuditLog; approvals: ApprovalManager },
) {
  const ran: Ran = { refunds: [], emails: [], searches: 0 };
  const audit = shared?.audit ?? new AuditLog();
  const approvals =
    shared?.approvals ??
    new ApprovalManager({ audit, approvers: testApproverInits([...TEST_APPROVERS]) });
  const checkpointer = shared?.checkpointer ?? new MemorySaver();
  const model = scriptedModel(turns);
  const governance = governanceMiddleware({
    policy: new PolicyEngine({ audit, rules: [rules.requireApproval({ tools: ['send_email'] })] }),
    approvals,
    audit,
    agentId: 'support-bot',
    safetyClasses: { refund: 'financial', send_email: 'write', search: 'read' },
    ...middleware,
  });
  const agent = createAgent({
    model,
    tools: countingTools(ran),
    middleware: [governance] as never,
    checkpointer,
  }) as unknown as Agent;
  return { agent, ran, model, audit, approvals, checkpointer };
}

let threads = 0;
const newThread = () => ({ configurable: { thread_id: `hitl-${process.pid}-${++threads}` } });
const user = (content: string) => ({ messages: [{ role: 'user', content }] });

function interruptsOf(result: Result): ApprovalsInterrupt[] {
  return (result.__interrupt__ ?? []).map((item) => item.value as ApprovalsInterrupt);
}
function only(result: Result): ApprovalsInterrupt {
  const all = interruptsOf(result);
  expect(all, 'exactly one interrupt').toHaveLength(1);
  return all[0]!;
}
const approve = (approval: PendingApproval, name = 'alice') => ({
  type: 'approve',
  ...signAs(approval, name),
});
const toolMessages = (result: Result) =>
  result.messages.filter((message): message is ToolMessage => message instanceof ToolMessage);

describe('HITL parity: the tools given to createAgent', () => {
  it('1. two calls needing people in one model turn raise ONE interrupt, in call order', async () => {
    const { agent, ran } = build([{ toolCalls: [refund('A-1'), email('bob@example.com')] }, 'ok']);
    const first = await agent.invoke(user('refund and tell bob'), newThread());
    const value = only(first);
    expect(value.actionRequests.map((action) => [action.name, action.args])).toEqual([
      ['refund', { order: 'A-1', amount: '50.00' }],
      ['send_email', { to: 'bob@example.com', body: 'hello' }],
    ]);
    expect(value.reviewConfigs.map((config) => config.actionName)).toEqual([
      'refund',
      'send_email',
    ]);
    expect(ran).toEqual({ refunds: [], emails: [], searches: 0 });
  });

  it('2. { decisions } in call order settle the turn; each call runs once, and a repeat resume runs nothing again', async () => {
    const { agent, ran } = build([{ toolCalls: [refund('A-1'), email('bob@example.com')] }, 'ok']);
    const config = newThread();
    const [r, e] = only(await agent.invoke(user('go'), config)).approvals;
    const done = await agent.invoke(
      new Command({ resume: { decisions: [approve(r!), approve(e!)] } }),
      config,
    );
    expect(done.__interrupt__).toBeUndefined();
    expect(ran.refunds).toHaveLength(1);
    expect(ran.emails).toHaveLength(1);
    expect(done.messages.at(-1)?.content).toBe('ok');
  });

  it('3. none of the turn runs until every decision is in: one approval of two re-raises the interrupt with the other', async () => {
    const { agent, ran } = build([
      { toolCalls: [refund('A-1'), email('bob@example.com'), search('x')] },
      'ok',
    ]);
    const config = newThread();
    const first = only(await agent.invoke(user('go'), config));
    // The read needs no one: it is not in the interrupt, and it waits with the turn.
    expect(first.actionRequests.map((action) => action.name)).toEqual(['refund', 'send_email']);
    const email1 = first.approvals[1]!;
    const partial = await agent.invoke(new Command({ resume: [signAs(email1, 'alice')] }), config);
    expect(only(partial).actionRequests.map((action) => action.name)).toEqual(['refund']);
    expect(ran).toEqual({ refunds: [], emails: [], searches: 0 });
    const done = await agent.invoke(
      new Command({ resume: [signAs(first.approvals[0]!, 'bob')] }),
      config,
    );
    expect(done.__interrupt__).toBeUndefined();
    expect(ran).toMatchObject({ searches: 1 });
    expect(ran.refunds).toHaveLength(1);
    expect(ran.emails).toHaveLength(1);
  });

  it('4. a resume shared by the turn logs no spurious security_event', async () => {
    const { agent, audit } = build([{ toolCalls: [refund('A-1'), email('b@example.com')] }, 'ok']);
    const config = newThread();
    const [r, e] = only(await agent.invoke(user('go'), config)).approvals;
    await agent.invoke(new Command({ resume: { decisions: [approve(r!), approve(e!)] } }), config);
    const security = (await audit.events(config.configurable.thread_id)).filter(
      (event) => event.type === 'security_event',
    );
    expect(security).toEqual([]);
  });

  it('5. per-tool allowedDecisions are shown, and a decision of another type is refused wherever it is made', async () => {
    const { agent, ran, approvals } = build([{ toolCalls: [refund('A-1')] }, 'ok', 'ok'], {
      review: { refund: { allowedDecisions: ['approve', 'reject'] } },
    });
    const config = newThread();
    const first = only(await agent.invoke(user('go'), config));
    expect(first.reviewConfigs[0]?.allowedDecisions).toEqual(['approve', 'reject']);
    const approval = first.approvals[0]!;
    const edited = { order: 'A-1', amount: '5000.00' };
    const value = only(
      await agent.invoke(
        new Command({
          resume: {
            decisions: [
              {
                type: 'edit',
                editedAction: { name: 'refund', args: edited },
                ...signAs(approval, 'alice', 'edit', { editedArgs: edited }),
              },
            ],
          },
        }),
        config,
      ),
    );
    expect(value.approvals[0]?.refusals.map((refusal) => refusal.code)).toEqual([
      'decision_not_allowed',
    ]);
    // The same edit made out of band (the inbox, the CLI) does not clear the call either.
    await approvals.decide(
      approval.approvalId,
      signAs(approval, 'bob', 'edit', { editedArgs: edited }),
    );
    const done = await agent.invoke(new Command({ resume: { type: 'veridex.recheck' } }), config);
    expect(ran.refunds).toEqual([]);
    expect(toolMessages(done)[0]?.content).toMatch(/decision_not_allowed/);
  });

  it('6. argsSchema and a description (string, or a factory of the call) come from the review config', async () => {
    const { agent } = build([{ toolCalls: [refund('A-1'), email('bob@example.com')] }, 'ok'], {
      review: {
        refund: {
          argsSchema: { type: 'object', properties: { amount: { type: 'string' } } },
          description: 'Refund: check the order first.',
        },
        send_email: {
          description: async (call, facts) =>
            `Email to ${String(call.args.to)} (${facts.route}, ${facts.quorum.required} needed)`,
        },
      },
    });
    const value = only(await agent.invoke(user('go'), newThread()));
    expect(value.actionRequests.map((action) => action.description)).toEqual([
      'Refund: check the order first.',
      'Email to bob@example.com (human_required, 1 needed)',
    ]);
    expect(value.reviewConfigs[0]?.argsSchema).toEqual({
      type: 'object',
      properties: { amount: { type: 'string' } },
    });
    // Without an entry, the edit schema is the tool's own input schema.
    expect(value.reviewConfigs[1]?.argsSchema).toMatchObject({
      type: 'object',
      properties: { to: { type: 'string' }, body: { type: 'string' } },
    });
  });

  it('7. a review key naming no tool is a configuration error, found before the model runs', async () => {
    const { agent, model } = build([{ toolCalls: [refund('A-1')] }, 'ok'], {
      review: { refnud: { allowedDecisions: ['reject'] } },
    });
    // LangChain wraps what a middleware hook throws; ours is the cause.
    const error = await agent.invoke(user('go'), newThread()).catch((caught: unknown) => caught);
    expect((error as { cause?: unknown }).cause ?? error).toMatchObject({
      code: 'config_invalid',
      message: expect.stringContaining('"refnud"'),
    });
    expect(model.calls).toHaveLength(0);
  });

  it('8. a rejection with a message answers its call with that message; the call never runs', async () => {
    const { agent, ran } = build([{ toolCalls: [refund('A-1')] }, 'understood']);
    const config = newThread();
    const [approval] = only(await agent.invoke(user('go'), config)).approvals;
    const done = await agent.invoke(
      new Command({
        resume: {
          decisions: [
            {
              type: 'reject',
              ...signAs(approval!, 'alice', 'reject', { reason: 'order already refunded' }),
            },
          ],
        },
      }),
      config,
    );
    expect(ran.refunds).toEqual([]);
    const [answer] = toolMessages(done);
    expect(answer?.status).toBe('error');
    expect(answer?.content).toMatch(/approval_rejected[\s\S]*order already refunded/);
  });

  it('9. a reject whose message is not a string is refused, and nothing is decided', async () => {
    const { agent, ran, approvals } = build([{ toolCalls: [refund('A-1')] }, 'ok']);
    const config = newThread();
    const [approval] = only(await agent.invoke(user('go'), config)).approvals;
    const value = only(
      await agent.invoke(
        new Command({
          resume: {
            decisions: [
              { type: 'reject', message: { text: 'no' }, ...signAs(approval!, 'alice', 'reject') },
            ],
          },
        }),
        config,
      ),
    );
    expect(value.refusals.map((refusal) => refusal.code)).toEqual(['resume_payload_invalid']);
    expect(value.refusals[0]?.message).toMatch(/message must be a string/);
    expect((await approvals.require(approval!.approvalId)).status).toBe('pending');
    expect(ran.refunds).toEqual([]);
  });

  it('10. an edit runs the edited call (re-decided as a new proposal, approved by someone other than its editor)', async () => {
    const { agent, ran } = build([{ toolCalls: [refund('A-1', '50.00')] }, 'ok']);
    const config = newThread();
    const [approval] = only(await agent.invoke(user('go'), config)).approvals;
    const edited = { order: 'A-1', amount: '20.00' };
    const again = only(
      await agent.invoke(
        new Command({
          resume: {
            decisions: [
              {
                type: 'edit',
                editedAction: { name: 'refund', args: edited },
                ...signAs(approval!, 'alice', 'edit', { editedArgs: edited }),
              },
            ],
          },
        }),
        config,
      ),
    );
    expect(again.actionRequests[0]?.args).toEqual(edited);
    const done = await agent.invoke(
      new Command({ resume: { decisions: [approve(again.approvals[0]!, 'bob')] } }),
      config,
    );
    expect(done.__interrupt__).toBeUndefined();
    expect(ran.refunds).toEqual([edited]);
  });

  it('11. a decision list of the wrong length decides nothing', async () => {
    const { agent, ran } = build([{ toolCalls: [refund('A-1'), email('b@example.com')] }, 'ok'], {
      approvals: new ApprovalManager({
        audit: new AuditLog(),
        approvers: testApproverInits([...TEST_APPROVERS]),
        identity: 'unverified',
      }),
    });
    const config = newThread();
    only(await agent.invoke(user('go'), config));
    const value = only(
      await agent.invoke(
        new Command({ resume: { decisions: [{ type: 'approve', approver: 'alice' }] } }),
        config,
      ),
    );
    expect(value.actionRequests).toHaveLength(2);
    expect(value.refusals.map((refusal) => refusal.code)).toEqual(['resume_payload_invalid']);
    expect(ran.refunds).toEqual([]);
  });

  it("12. onRejection 'return_to_model': a rejection answers every call of the turn, none runs, and the model goes again", async () => {
    const { agent, ran, model } = build(
      [{ toolCalls: [refund('A-1'), email('b@example.com'), search('x')] }, 'I will not refund.'],
      { onRejection: 'return_to_model' },
    );
    const config = newThread();
    const [r, e] = only(await agent.invoke(user('go'), config)).approvals;
    const done = await agent.invoke(
      new Command({
        resume: { decisions: [{ type: 'reject', ...signAs(r!, 'alice', 'reject') }, approve(e!)] },
      }),
      config,
    );
    expect(done.__interrupt__).toBeUndefined();
    expect(ran).toEqual({ refunds: [], emails: [], searches: 0 });
    expect(
      toolMessages(done).map((message) => [
        message.name,
        /approval_rejected|turn_rejected/.exec(String(message.content))?.[0],
      ]),
    ).toEqual([
      ['refund', 'approval_rejected'],
      ['send_email', 'turn_rejected'],
      ['search', 'turn_rejected'],
    ]);
    expect(done.messages.at(-1)?.content).toBe('I will not refund.');
    expect(model.calls).toHaveLength(2);
  });

  it("13. by default a rejection answers its call and the turn's cleared calls run", async () => {
    const { agent, ran } = build([{ toolCalls: [refund('A-1'), email('b@example.com')] }, 'ok']);
    const config = newThread();
    const [r, e] = only(await agent.invoke(user('go'), config)).approvals;
    await agent.invoke(
      new Command({
        resume: { decisions: [{ type: 'reject', ...signAs(r!, 'alice', 'reject') }, approve(e!)] },
      }),
      config,
    );
    expect(ran.refunds).toEqual([]);
    expect(ran.emails).toHaveLength(1);
  });

  it('14. rules.requireApproval is the counterpart of interruptOn: named tools wait, others run', async () => {
    const { agent, ran } = build([
      { toolCalls: [search('x')] },
      { toolCalls: [email('b@example.com')] },
      'ok',
    ]);
    const config = newThread();
    const value = only(await agent.invoke(user('go'), config));
    expect(ran.searches).toBe(1);
    expect(value.actionRequests.map((action) => [action.name, action.route])).toEqual([
      ['send_email', 'human_required'],
    ]);
    expect(() => rules.requireApproval({ tools: [] })).toThrow(/at least one tool/);
    expect(() => rules.requireApproval({ tools: ['x'], route: 'auto' as never })).toThrow(
      /route "auto"/,
    );
  });

  it('15. a thread resumed in a new process through resumeThread still gets one interrupt per turn', async () => {
    const checkpointer = new MemorySaver();
    const audit = new AuditLog();
    const approvals = new ApprovalManager({
      audit,
      approvers: testApproverInits([...TEST_APPROVERS]),
    });
    const shared = { checkpointer, audit, approvals };
    const turns: ScriptedTurn[] = [{ toolCalls: [refund('A-1'), email('b@example.com')] }, 'ok'];
    const config = newThread();
    const first = build(turns, {}, shared);
    const [r, e] = only(await first.agent.invoke(user('go'), config)).approvals;
    // A second process: a new middleware that has served no model request.
    const second = build(turns, {}, shared);
    const partial = (await resumeThread(
      second.agent as never,
      config.configurable.thread_id,
      signAs(e!, 'alice'),
    )) as Result;
    expect(only(partial).actionRequests.map((action) => action.name)).toEqual(['refund']);
    expect(second.ran.emails).toEqual([]);
    const done = (await resumeThread(
      second.agent as never,
      config.configurable.thread_id,
      signAs(r!, 'bob'),
    )) as Result;
    expect(done.__interrupt__).toBeUndefined();
    expect(second.ran.refunds).toHaveLength(1);
    expect(second.ran.emails).toHaveLength(1);
  });

  it('16. a process that has not seen the agent tools refuses a plain-invoke resume rather than decide half a turn; resumeThread then completes it', async () => {
    const checkpointer = new MemorySaver();
    const audit = new AuditLog();
    const approvals = new ApprovalManager({
      audit,
      approvers: testApproverInits([...TEST_APPROVERS]),
    });
    const shared = { checkpointer, audit, approvals };
    const turns: ScriptedTurn[] = [
      { toolCalls: [refund('A-1'), email('b@example.com'), search('x')] },
      'ok',
    ];
    const config = newThread();
    const first = build(turns, {}, shared);
    const [r, e] = only(await first.agent.invoke(user('go'), config)).approvals;
    const second = build(turns, {}, shared);
    const refused = await second.agent
      .invoke(new Command({ resume: { decisions: [approve(r!), approve(e!)] } }), config)
      .catch((error: unknown) => error);
    expect((refused as { cause?: unknown }).cause ?? refused).toMatchObject({
      code: 'config_invalid',
      message: expect.stringContaining('resumeThread'),
    });
    expect(second.ran).toEqual({ refunds: [], emails: [], searches: 0 });
    const done = (await resumeThread(second.agent as never, config.configurable.thread_id, [
      signAs(r!, 'alice'),
      signAs(e!, 'bob'),
    ])) as Result;
    expect(done.__interrupt__).toBeUndefined();
    expect(second.ran).toMatchObject({ searches: 1 });
    expect(second.ran.refunds).toHaveLength(1);
    expect(second.ran.emails).toHaveLength(1);
  });
});
