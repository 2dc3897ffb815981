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
});
