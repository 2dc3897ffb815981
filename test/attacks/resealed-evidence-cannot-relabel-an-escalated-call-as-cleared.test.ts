import { describe, expect, it } from 'vitest';
import { paidThread } from '../support/paid-thread.js';
import { rewriteEvents } from '../support/rechain.js';
import {
  executedTransfer as executed,
  isPay,
  trusted,
  verifyResealed,
} from '../support/resealed-bundle.js';

/**
 * Adversary: an insider who holds the audit table AND the agent's evidence signing key (re-chains
 * and re-seals at will) but no approver's private key. The auditor runs verifyEvidence (=
 * `veridex verify --approvers approvers.json`) trusting alice and bob. Guarantee under attack
 * (README "Evidence fails closed"): an executed call that escalated must be proven in the bundle
 * by a quorum of verifying decisions by trusted approvers on the version that ran. Each test
 * keeps the $50,000 transfer's `tool_executed` event in the bundle and asserts the SECURE
 * outcome: the bundle is invalid.
 */

function verify(threadId: string, events: Parameters<typeof verifyResealed>[1]) {
  return verifyResealed(threadId, events, trusted(['alice', 'bob']));
}

describe('a re-sealed bundle cannot relabel an escalated call so that it needs no approvers', () => {
  it('control: the honest bundle verifies against the trusted approvers', async () => {
    const { events, threadId } = await paidThread('t-relabel-control');
    expect(verify(threadId, events).valid).toBe(true);
  });

  it('removes the tool call id from the tool_executed event and drops every approval event: the executed transfer is still checked', async () => {
    const { events, threadId } = await paidThread('t-no-call-id');
    const forged = rewriteEvents(events, (list) =>
      list
        .filter((event) => !event.type.startsWith('approval_'))
        .map((event) => {
          if (event.type === 'tool_executed') delete event.payload.toolCallId;
          return event;
        }),
    );
    expect(executed(forged)?.payload.safetyClass).toBe('financial');
    expect(verify(threadId, forged).valid).toBe(false);
  });

  it('swaps the arguments of the approved transfer (recipient and amount) keeping alice’s and bob’s real signatures: the arguments shown are not the proposal they signed', async () => {
    const { events, threadId } = await paidThread('t-args-swap');
    const forged = rewriteEvents(events, (list) =>
      list.map((event) => {
        if (event.type === 'tool_proposed' && isPay(event)) {
          event.payload.arguments = { to: 'mallory', amount: '5000000.00', currency: 'USD' };
        }
        return event;
      }),
    );
    expect(verify(threadId, forged).valid).toBe(false);
  });

  it("replays alice's and bob's real signatures from another thread's approval onto a different transfer in this thread", async () => {
    // Thread A: alice and bob really approved a $50,000 transfer to acme.
    const honest = await paidThread('t-replay-source');
    // Thread B: the insider claims a transfer to mallory ran and carries A's approvals along.
    const threadId = 't-replay-target';
    const forged = rewriteEvents(honest.events, (list) =>
      list.map((event) => {
        event.threadId = threadId;
        if (event.type === 'tool_proposed' && isPay(event)) {
          event.payload.arguments = { to: 'mallory', amount: '49999.00', currency: 'USD' };
        }
        return event;
      }),
    );
    // The statements still name thread A's approval id, which thread B can never derive.
    const decided = forged.filter((e) => e.type === 'approval_decided');
    expect(decided).toHaveLength(2);
    expect(verify(threadId, forged).valid).toBe(false);
  });

  // The request's route is held to the route its policy decision escalated to, the execution to
  // the tool that decision cleared, and an unplanned read to the class recorded for that tool.
  it("rewrites the request's route to 'auto' with a quorum of 0 and drops both decisions: the escalated transfer is proven by nobody", async () => {
    const { events, threadId } = await paidThread('t-route-auto');
    const forged = rewriteEvents(events, (list) =>
      list
        .filter((event) => event.type !== 'approval_decided')
        .map((event) => {
          if (event.type === 'approval_requested') {
            event.payload.route = 'auto';
            event.payload.requiredApprovals = 0;
          }
          if (event.type === 'approval_resolved') {
            event.payload.requiredApprovals = 0;
            event.payload.approvers = [];
          }
          return event;
        }),
    );
    // The policy decision still says the transfer escalated to dual approval.
    expect(forged.find((e) => e.type === 'policy_decision')?.payload.route).toBe('dual_approval');
    expect(executed(forged)).toBeDefined();
    expect(forged.some((e) => e.type === 'approval_decided')).toBe(false);
    expect(verify(threadId, forged).valid).toBe(false);
  });

  it("downgrades the request's route from dual_approval to human_required and drops bob's decision: alice alone does not make a dual approval", async () => {
    const { events, threadId } = await paidThread('t-route-downgrade');
    const forged = rewriteEvents(events, (list) =>
      list
        .filter((event) => !(event.type === 'approval_decided' && event.payload.approver === 'bob'))
        .map((event) => {
          if (event.type === 'approval_requested') {
            event.payload.route = 'human_required';
            event.payload.requiredApprovals = 1;
          }
          if (event.type === 'approval_resolved') {
            event.payload.requiredApprovals = 1;
            event.payload.approvers = ['alice'];
          }
          return event;
        }),
    );
    expect(forged.find((e) => e.type === 'policy_decision')?.payload.route).toBe('dual_approval');
    expect(verify(threadId, forged).valid).toBe(false);
  });

  it("relabels the executed transfer as a 'read' under a call id no policy decision names, dropping every approval event", async () => {
    const { events, threadId } = await paidThread('t-read-relabel');
    const forged = rewriteEvents(events, (list) =>
      list
        .filter((event) => !event.type.startsWith('approval_'))
        .map((event) => {
          if (event.type === 'tool_executed') {
            event.payload.toolCallId = 'call_balance';
            event.payload.safetyClass = 'read';
          }
          return event;
        }),
    );
    expect(executed(forged)?.payload.toolName).toBe('transfer');
    expect(verify(threadId, forged).valid).toBe(false);
  });

  it("relabels the executed transfer as an unplanned 'read' under a call id nothing else names, dropping every approval event", async () => {
    const { events, threadId } = await paidThread('t-read-unplanned');
    const forged = rewriteEvents(events, (list) =>
      list
        .filter((event) => !event.type.startsWith('approval_'))
        .map((event) => {
          if (event.type === 'tool_executed') {
            event.payload.toolCallId = 'call_unplanned';
            event.payload.safetyClass = 'read';
          }
          return event;
        }),
    );
    expect(executed(forged)?.payload.toolCallId).toBe('call_unplanned');
    expect(verify(threadId, forged).valid).toBe(false);
  });
});
