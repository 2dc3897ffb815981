// Adversary: whoever sends a resume value — here an honest HITL client — to a thread resumed
// with `agent.invoke(new Command({ resume }))` in a new process (a restarted server) that has
// served no model request and was not given the agent's tools (no resumeThread, startResumer
// or useAgentTools). README "Approvals in LangChain's HITL protocol" names this gap ("waits at
// each createAgent tool instead, one interrupt per call"); what it does not say, and what breaks
// the promises around it:
// - the resume value that answers the gate's interrupt is swallowed: the gate re-runs without
//   interrupting (it knows none of the agent's tools), so the approvers' signed decisions are
//   neither counted nor refused — no refusal, no security event, the requests stay pending;
// - the turn's cleared calls (a read) run while its other calls still wait for people;
// - the next resume value reaches every per-call interrupt, and each logs the decisions meant
//   for the other calls as `approval_not_found` "... is not pending in this thread": a
//   security event saying a pending approval of this thread does not exist.
import { Command } from '@langchain/langgraph';
import { describe, expect, it } from 'vitest';
import type { ScriptedTurn } from '../../src/testing/index.js';
import { signAs } from '../support/approvers.js';
import {
  buildHitlAgent,
  interruptsOf,
  newThread,
  securityEvents,
  sharedState,
  user,
} from '../support/hitl-agent.js';

const turns: ScriptedTurn[] = [
  {
    toolCalls: [
      { id: 'r1', name: 'refund', args: { order: 'A-1', amount: '50.00' } },
      { id: 'e1', name: 'send_email', args: { to: 'bob@example.com', body: 'hi' } },
      { id: 's1', name: 'search', args: { q: 'A-1' } },
    ],
  },
  'ok',
];

async function suspendedInFirstProcess() {
  const shared = sharedState();
  const config = newThread();
  const first = buildHitlAgent(turns, {}, shared);
  const value = interruptsOf(await first.agent.invoke(user('refund and tell bob'), config))[0]!;
  // A restart: a new middleware and agent over the same checkpointer and database.
  const second = buildHitlAgent(turns, {}, shared);
  const [refund, email] = value.approvals;
  return { shared, config, second, refund: refund!, email: email! };
}

describe('a thread resumed by plain invoke in a process that has not seen the agent tools', () => {
  it('the signed decisions of the resume are counted or refused, never dropped', async () => {
    const { shared, config, second, refund, email } = await suspendedInFirstProcess();
    const result = await second.agent
      .invoke(
        new Command({
          resume: {
            decisions: [
              { type: 'approve', ...signAs(refund, 'alice') },
              { type: 'approve', ...signAs(email, 'alice') },
            ],
          },
        }),
        config,
      )
      .catch((error: unknown) => error);
    // Failing closed with an error the caller sees is a secure answer too.
    if (result instanceof Error) {
      expect(second.ran).toEqual({ refunds: [], emails: [], searches: 0 });
      return;
    }
    const statuses = [
      (await shared.approvals.require(refund.approvalId)).status,
      (await shared.approvals.require(email.approvalId)).status,
    ];
    const refused = interruptsOf(result as never).flatMap((value) => [
      ...value.refusals,
      ...value.approvals.flatMap((approval) => approval.refusals),
    ]);
    expect(
      statuses.every((status) => status === 'approved') || refused.length > 0,
      `alice's two signed approvals vanished: requests ${statuses.join(', ')}, no refusal`,
    ).toBe(true);
  });

  it('no call of the turn runs while another call of it still waits for people', async () => {
    const { config, second, email } = await suspendedInFirstProcess();
    await second.agent
      .invoke(new Command({ resume: [signAs(email, 'alice')] }), config)
      .catch((error: unknown) => error);
    expect(second.ran.refunds).toEqual([]);
    expect(second.ran.searches, 'the read ran while the refund still waited').toBe(0);
  });

  it('a decision for another call of the turn is not logged as an approval that does not exist', async () => {
    const { shared, config, second, refund, email } = await suspendedInFirstProcess();
    const recheck = await second.agent
      .invoke(new Command({ resume: { type: 'veridex.recheck' } }), config)
      .catch((error: unknown) => error);
    if (!(recheck instanceof Error)) {
      await second.agent.invoke(
        new Command({ resume: [signAs(refund, 'bob'), signAs(email, 'bob')] }),
        config,
      );
      expect(second.ran.refunds).toHaveLength(1);
      expect(second.ran.emails).toHaveLength(1);
    }
    const lies = (await securityEvents(shared.audit, config.configurable.thread_id)).filter(
      (event) => event.kind === 'approval_not_found',
    );
    expect(lies, 'pending approvals of this thread logged as not pending in it').toEqual([]);
  });
});
