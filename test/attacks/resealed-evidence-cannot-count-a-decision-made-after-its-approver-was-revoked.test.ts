import { describe, expect, it } from 'vitest';
import { trustedApprovers } from '../support/approvers.js';
import { paidThread } from '../support/paid-thread.js';
import { verifyResealed } from '../support/resealed-bundle.js';

/**
 * Adversary: whoever hands the auditor a bundle holding a decision recorded AFTER its approver
 * was revoked (an insider holding the evidence key who re-seals; the bundle below is the honest
 * one, and the auditor's approvers.json says alice left before her decision was counted, her
 * key being tidied up a day later).
 *
 * Guarantee under attack (README "Who approved what, provable offline": the verifier checks
 * "that each key is the named approver's and was not revoked"; online, prove-approval.ts uses
 * "the earlier of the key's and its approver's revocation"). The verifier took
 * `key.revokedAt ?? approver.revokedAt`: a revoked key's later time hid its approver's
 * earlier revocation. It now takes the earlier of the two (verify-decisions.ts). The test
 * asserts the SECURE outcome.
 */
describe("the offline verifier judges a decision by the earlier of its key's and its approver's revocation", () => {
  it('alice the approver was revoked before her decision was counted, her key only a day later: her approval does not count', async () => {
    const { events, threadId } = await paidThread('t-approver-revoked-first');
    const decided = events.find(
      (event) => event.type === 'approval_decided' && event.payload.approver === 'alice',
    )!;
    const counted = Date.parse(decided.timestamp);
    const approvers = trustedApprovers(['alice', 'bob']).map((approver) =>
      approver.id === 'alice'
        ? {
            ...approver,
            revokedAt: new Date(counted - 60_000).toISOString(),
            keys: approver.keys.map((key) => ({
              ...key,
              revokedAt: new Date(counted + 24 * 3_600_000).toISOString(),
            })),
          }
        : approver,
    );
    expect(verifyResealed(threadId, events, approvers).valid).toBe(false);
  });

  it('control: alice the approver revoked before her decision, her key never: the approval does not count', async () => {
    const { events, threadId } = await paidThread('t-approver-revoked-only');
    const decided = events.find(
      (event) => event.type === 'approval_decided' && event.payload.approver === 'alice',
    )!;
    const approvers = trustedApprovers(['alice', 'bob']).map((approver) =>
      approver.id === 'alice'
        ? { ...approver, revokedAt: new Date(Date.parse(decided.timestamp) - 60_000).toISOString() }
        : approver,
    );
    expect(verifyResealed(threadId, events, approvers).valid).toBe(false);
  });
});
