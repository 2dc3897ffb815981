import { describe, expect, it } from 'vitest';
import {
  Ed25519Signer,
  generateKeyPair,
  sealEvidence,
  type TraceEvent,
  verifyEvidence,
} from '../../src/audit/index.js';
import { trustedApprovers } from '../support/approvers.js';
import { paidThread } from '../support/paid-thread.js';
import { rewriteEvents } from '../support/rechain.js';

/**
 * The auditor's side of "execution is gated by proof": a bundle in which a call ran must carry
 * the decisions that allowed it. The insider here holds the audit table and the agent's signing
 * key, so they can re-chain and re-seal whatever they like; what they cannot do is sign as alice.
 */
const agent = new Ed25519Signer(generateKeyPair().privateKey);

const rewrite = rewriteEvents;

function verify(threadId: string, events: readonly TraceEvent[], allowUnverified = false) {
  const bundle = JSON.parse(JSON.stringify(sealEvidence({ threadId, events }, [agent])));
  return verifyEvidence(bundle, {
    keys: [agent.verifier()],
    approvers: trustedApprovers(),
    ...(allowUnverified ? { allowUnverified } : {}),
  });
}

describe('evidence of executed calls fails closed', () => {
  it('verifies an honest run: the transfer and the two signed approvals that allowed it', async () => {
    const { events, threadId } = await paidThread('t-honest');
    expect(verify(threadId, events)).toMatchObject({ valid: true, reasons: [] });
  });

  it('refuses a re-sealed history in which the transfer ran with no decision events at all', async () => {
    const { events, threadId } = await paidThread('t-nodecisions');
    const forged = rewrite(events, (list) =>
      list.filter(
        (event) => event.type !== 'approval_decided' && event.type !== 'approval_resolved',
      ),
    );
    const result = verify(threadId, forged);
    expect(result.valid).toBe(false);
    expect(result.reasons.join('\n')).toMatch(
      /call call_pay was executed, but approval apr_\w+ \(dual_approval\) has 0 verifying approval/,
    );
  });

  it('refuses one of the two approvals turned into a bare, unverified decision', async () => {
    const { events, threadId } = await paidThread('t-bare');
    const forged = rewrite(events, (list) => {
      const bob = list.find(
        (event) => event.type === 'approval_decided' && event.payload.approver === 'bob',
      )!;
      bob.payload.verified = false;
      delete bob.payload.signed;
      return list;
    });
    const result = verify(threadId, forged);
    expect(result.valid).toBe(false);
    expect(result.reasons.join('\n')).toMatch(/opened in signed mode but holds an unverified/);
    // Accepting the development mode by name does not help a request opened signed.
    expect(verify(threadId, forged, true).valid).toBe(false);
  });

  it('refuses a forged quorum of zero on the resolution: the route sets the floor', async () => {
    const { events, threadId } = await paidThread('t-zero');
    const forged = rewrite(events, (list) => {
      const kept = list.filter((event) => event.type !== 'approval_decided');
      for (const event of kept) {
        if (event.type === 'approval_resolved') event.payload.requiredApprovals = 0;
        if (event.type === 'approval_requested') event.payload.requiredApprovals = 0;
      }
      return kept;
    });
    expect(verify(threadId, forged).reasons.join('\n')).toMatch(
      /0 verifying approval\(s\).*2 required/,
    );
  });

  it('refuses a call that ran although its policy decision denied it', async () => {
    const { events, threadId } = await paidThread('t-denied');
    const forged = rewrite(events, (list) => {
      for (const event of list) {
        if (event.type === 'policy_decision') event.payload.verdict = 'deny';
      }
      return list;
    });
    expect(verify(threadId, forged).reasons.join('\n')).toContain(
      'call call_pay was executed although its policy decision denied it',
    );
  });

  it('refuses an escalated call that ran with its approval request dropped', async () => {
    const { events, threadId } = await paidThread('t-norequest');
    const forged = rewrite(events, (list) =>
      list.filter((event) => !event.type.startsWith('approval_')),
    );
    expect(verify(threadId, forged).reasons.join('\n')).toContain(
      'the bundle holds no approval request for it',
    );
  });
});
