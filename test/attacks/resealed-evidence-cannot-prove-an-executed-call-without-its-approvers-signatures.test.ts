import { describe, expect, it } from 'vitest';
import { paidThread } from '../support/paid-thread.js';
import { rewriteEvents } from '../support/rechain.js';
import { trusted, verifyResealed as verify } from '../support/resealed-bundle.js';

/**
 * Adversary (c): an insider who holds the audit table AND the agent's evidence signing key, and
 * re-chains / re-seals. They do not hold alice's or bob's private keys. The auditor runs
 * `verifyEvidence` (= `veridex verify`). Each test asserts the SECURE outcome (invalid).
 */

const rewrite = rewriteEvents;

describe('a re-sealed bundle cannot prove an executed call without its approvers signatures', () => {
  it('control: the honest bundle verifies with the trusted approvers; without them only by the named opt-in', async () => {
    const { events, threadId } = await paidThread('t-honest');
    expect(verify(threadId, events, trusted(['alice', 'bob', 'payout-bot'])).valid).toBe(true);
    // Without a trust list the approvals prove nothing: the evidence key's holder could have
    // minted the approver keys the bundle carries (fail closed; --trust-bundle-keys opts in).
    const alone = verify(threadId, events);
    expect(alone.valid).toBe(false);
    expect(alone.reasons.join('\n')).toContain('--trust-bundle-keys');
    expect(verify(threadId, events, undefined, { trustBundleKeys: true }).valid).toBe(true);
  });

  it('drops the policy decision and every approval event of the transfer, keeping tool_executed: an executed call with no policy decision at all is invalid', async () => {
    const { events, threadId } = await paidThread('t-nopolicy');
    const forged = rewrite(events, (list) =>
      list.filter(
        (event) =>
          !event.type.startsWith('approval_') &&
          !(event.type === 'policy_decision' && event.payload.toolCallId === 'call_pay'),
      ),
    );
    expect(forged.some((event) => event.type === 'tool_executed')).toBe(true);
    const result = verify(threadId, forged, trusted(['alice', 'bob']));
    expect(result.valid).toBe(false);
  });

  it("renames the transfer's policy decision to another tool call id: tool_executed for call_pay matched to no policy decision is invalid", async () => {
    const { events, threadId } = await paidThread('t-renamed');
    const forged = rewrite(events, (list) =>
      list
        .filter((event) => !event.type.startsWith('approval_'))
        .map((event) => {
          if (event.type === 'policy_decision' && event.payload.toolCallId === 'call_pay') {
            event.payload.toolCallId = 'call_unrelated';
          }
          return event;
        }),
    );
    const result = verify(threadId, forged, trusted(['alice', 'bob']));
    expect(result.valid).toBe(false);
  });
});
