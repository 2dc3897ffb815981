// Adversaries: whoever sends a resume value (a stale or buggy HITL client) and an approver
// deciding out of band. A decision must count for the call it names and as the decision it is:
// - unverified mode (`identity: 'unverified'`): bare `{ decisions }` entries are matched by
//   position even when each names its approval (`approvalId`), so a list the client reordered
//   approves the call it rejected and rejects the one it approved;
// - a signed `edit` whose HITL `editedAction` names another tool or other arguments than the
//   signed ones is taken silently (the signed arguments run), while the same mismatch in the
//   `type` field, or in a bare edit, is refused as `resume_payload_invalid`;
// - a `reject` made in the inbox or the CLI on a tool whose `review` does not allow rejecting
//   is counted (and, with `onRejection: 'return_to_model'`, ends the whole turn) with no
//   `decision_not_allowed` refusal or event, although README says a decision of another type
//   is refused "in a resume and when made in the inbox or the CLI".
import { Command } from '@langchain/langgraph';
import { describe, expect, it } from 'vitest';
import { signAs } from '../support/approvers.js';
import {
  buildHitlAgent,
  interruptsOf,
  newThread,
  securityEvents,
  sharedState,
  toolMessages,
  user,
} from '../support/hitl-agent.js';

const small = { id: 'r1', name: 'refund', args: { order: 'A-1', amount: '5.00' } };
const large = { id: 'r2', name: 'refund', args: { order: 'A-2', amount: '5000.00' } };

describe('a HITL decision counts for the call it names, as what it says', () => {
  it('unverified mode: a reordered list of bare decisions, each naming its approval, decides each named call', async () => {
    const { agent, ran } = buildHitlAgent(
      [{ toolCalls: [small, large] }, 'ok'],
      {},
      sharedState('unverified'),
    );
    const config = newThread();
    const [first, second] = interruptsOf(await agent.invoke(user('refund both'), config))[0]!
      .approvals;
    // The reviewer approves the small refund and rejects the large one; the client lists the
    // decisions in another order than the action requests, each naming its approval.
    await agent.invoke(
      new Command({
        resume: {
          decisions: [
            { type: 'reject', approver: 'alice', approvalId: second!.approvalId, message: 'no' },
            { type: 'approve', approver: 'alice', approvalId: first!.approvalId },
          ],
        },
      }),
      config,
    );
    expect(
      ran.refunds.map((refund) => refund.order),
      'the refund the reviewer rejected ran',
    ).not.toContain('A-2');
  });

  it('a signed edit whose editedAction names another tool is refused, like a bare one', async () => {
    const { agent, ran, approvals } = buildHitlAgent([{ toolCalls: [small] }, 'ok']);
    const config = newThread();
    const [approval] = interruptsOf(await agent.invoke(user('refund'), config))[0]!.approvals;
    const signedArgs = { order: 'A-1', amount: '4.00' };
    const result = await agent.invoke(
      new Command({
        resume: {
          decisions: [
            {
              type: 'edit',
              editedAction: { name: 'send_email', args: { to: 'x@example.com', body: 'y' } },
              ...signAs(approval!, 'alice', 'edit', { editedArgs: signedArgs }),
            },
          ],
        },
      }),
      config,
    );
    expect(interruptsOf(result)[0]?.refusals.map((refusal) => refusal.code)).toEqual([
      'resume_payload_invalid',
    ]);
    expect((await approvals.require(approval!.approvalId)).status).toBe('pending');
    expect(ran.refunds).toEqual([]);
  });

  it('a signed edit whose editedAction carries other arguments than the signed ones is refused', async () => {
    const { agent, approvals } = buildHitlAgent([{ toolCalls: [small] }, 'ok']);
    const config = newThread();
    const [approval] = interruptsOf(await agent.invoke(user('refund'), config))[0]!.approvals;
    // The reviewer's form said 1.00; the statement the client had signed says 4000.00.
    const result = await agent.invoke(
      new Command({
        resume: {
          decisions: [
            {
              type: 'edit',
              editedAction: { name: 'refund', args: { order: 'A-1', amount: '1.00' } },
              ...signAs(approval!, 'alice', 'edit', {
                editedArgs: { order: 'A-1', amount: '4000.00' },
              }),
            },
          ],
        },
      }),
      config,
    );
    expect(interruptsOf(result)[0]?.refusals.map((refusal) => refusal.code)).toEqual([
      'resume_payload_invalid',
    ]);
    expect((await approvals.require(approval!.approvalId)).status).toBe('pending');
  });

  it('a reject made out of band on a tool whose review does not allow rejecting is refused as decision_not_allowed', async () => {
    const { agent, ran, approvals, audit } = buildHitlAgent(
      [
        {
          toolCalls: [
            small,
            { id: 'e1', name: 'send_email', args: { to: 'bob@example.com', body: 'hi' } },
          ],
        },
        'ok',
      ],
      {
        review: { refund: { allowedDecisions: ['approve', 'edit'] } },
        onRejection: 'return_to_model',
      },
    );
    const config = newThread();
    const [refund, email] = interruptsOf(await agent.invoke(user('go'), config))[0]!.approvals;
    // Bob may not reject refunds; he does it in the inbox anyway.
    await approvals
      .decide(refund!.approvalId, signAs(refund!, 'bob', 'reject'))
      .catch((error: unknown) => error);
    const result = await agent.invoke(new Command({ resume: [signAs(email!, 'alice')] }), config);
    const codes = toolMessages(result).map(
      (message) => /\[(\w+)\]/.exec(String(message.content))?.[1] ?? 'ok',
    );
    expect(codes, 'the forbidden rejection was counted as approval_rejected').not.toContain(
      'approval_rejected',
    );
    const events = await securityEvents(audit, config.configurable.thread_id);
    expect(events.map((event) => event.kind)).toContain('decision_not_allowed');
    expect(ran.refunds).toEqual([]);
  });
});
