import { describe, expect, it } from 'vitest';
import { paidThread } from '../support/paid-thread.js';
import { rewriteEvents } from '../support/rechain.js';
import { isPay, trusted, verifyResealed } from '../support/resealed-bundle.js';

/**
 * Adversary: an insider who holds the audit table AND the agent's evidence signing key (re-chains
 * and re-seals at will) but no approver's private key. The auditor runs verifyEvidence (=
 * `veridex verify --approvers approvers.json`) trusting alice and bob. Guarantee under attack
 * (README "Evidence fails closed"): an executed call that escalated must be proven in the bundle
 * by a quorum of verifying decisions by trusted approvers on the version that ran. Each test
 * keeps the $50,000 transfer's `tool_executed` event in the bundle and asserts the SECURE
 * outcome: the bundle is invalid.
 */
// OPEN (policy replay is issue 34): the evidence key holder writes the policy decision itself;
// a verdict rewritten to `allow` with every approval event dropped is consistent with the rest
// of the bundle, so only replaying the policy in force against the recorded proposal shows it.
// (Its route, call-id and safety-class relabellings are fixed: see
// resealed-evidence-cannot-relabel-an-escalated-call-as-cleared.test.ts.)

function verify(threadId: string, events: Parameters<typeof verifyResealed>[1]) {
  return verifyResealed(threadId, events, trusted(['alice', 'bob']));
}

describe('a re-sealed bundle cannot relabel an escalated call as cleared (open: needs the policy)', () => {
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
