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
// OPEN (issue 29 note; policy replay is issue 34): the evidence key holder writes the policy
// decision, the request's route and the safety class; the verifier checks a bundle against
// what its policy recorded, not against the policy itself, so these relabellings still verify.

function verify(threadId: string, events: Parameters<typeof verifyResealed>[1]) {
  return verifyResealed(threadId, events, trusted(['alice', 'bob']));
}

describe('a re-sealed bundle cannot relabel an escalated call as cleared (open: needs the policy)', () => {
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

  it("rewrites the transfer's policy decision to 'allow' and drops every approval event: a $50,000 transfer the policy escalates is not cleared by a verdict the evidence key wrote", async () => {
    const { events, threadId } = await paidThread('t-verdict-allow');
    const forged = rewriteEvents(events, (list) =>
      list
        .filter((event) => !event.type.startsWith('approval_') && event.type !== 'run_suspended')
        .map((event) => {
          if (event.type === 'policy_decision' && isPay(event)) {
            event.payload.verdict = 'allow';
            event.payload.route = undefined;
            event.payload.evaluations = [];
            event.payload.ruleId = 'default';
            event.payload.reason = 'no rule matched';
          }
          return event;
        }),
    );
    // What the auditor reads: a $50,000 transfer (the amount the policy escalates) that ran.
    expect(forged.find((e) => e.type === 'tool_proposed')?.payload.arguments).toMatchObject({
      amount: '50000.00',
    });
    expect(verify(threadId, forged).valid).toBe(false);
  });
});
