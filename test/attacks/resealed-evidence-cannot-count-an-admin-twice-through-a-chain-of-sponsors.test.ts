import * as ed from '@noble/ed25519';
import { describe, expect, it } from 'vitest';
import type { TraceEvent, TrustedApprover } from '../../src/audit/index.js';
import { signAs, testKey, trustedApprovers } from '../support/approvers.js';
import { paidThread } from '../support/paid-thread.js';
import { rewriteEvents } from '../support/rechain.js';
import { verifyResealed } from '../support/resealed-bundle.js';

/**
 * Adversary: an insider who holds the agent's evidence key and re-seals bundles, together with
 * (or being) alice, an inbox admin. Alice holds every key her invitations enrolled: erin's (an
 * admin the operator added without a key; alice opened erin's invitation herself, so erin's key
 * is sponsored by alice) and erin-ops's (a brand-new approver erin's session invited, so its key
 * is sponsored by erin). This chain is exactly the one of
 * `inbox-admin-cannot-count-twice-through-a-chain-of-sponsors-or-an-edit`, which the running
 * gate now refuses (`sponsorChain`, src/approvals/sponsor-chain.ts).
 *
 * Guarantee under attack (README "One admin, one vote" and "Security", auditor row): a
 * sponsored key "never counts in one quorum with the sponsor's own decision … nor with any
 * admin up the chain of sponsors above her", "in the proof before the call runs and in
 * `veridex verify`"; `veridex verify --approvers` proves "every approval had its quorum of
 * distinct people".
 *
 * Steps: take an honest, paid dual-approval thread (alice + bob). Replace bob's
 * `approval_decided` event with an approval of the same request signed with erin-ops's key
 * (which alice holds), re-chain, re-seal with the evidence key, and verify against the exported
 * approvers file in which erin's key has sponsor "alice" and erin-ops's key has sponsor "erin".
 * The offline verifier (`speakersOf`, src/audit/same-person.ts) follows only the key's direct
 * sponsor, so alice and erin-ops count as two people and the bundle is VALID, although the gate
 * would never have run this call.
 *
 * Severity: medium (needs the evidence key as well as an admin's chain of two invitations; the
 * one-level case is already defended, see approval-proofs-count-people-not-keys-names-or-replays).
 *
 * Suggested fix (mechanism): compute the sponsor chain offline as online — in `checkDecisions`
 * resolve each trusted key's sponsor to the approvers file's keys of that sponsor and follow
 * their sponsors (bounded depth, as `sponsorChain`), and have `speakersOf` return the whole
 * chain, both in `quorumProblem` (verify-decisions.ts) and in the executed-call quorum and the
 * proposer check (verify-executions.ts).
 */
describe('a re-sealed bundle cannot count an admin and the key at the end of her chain of sponsors as two people', () => {
  const requestOf = (events: readonly TraceEvent[]) => {
    const requested = events.find((event) => event.type === 'approval_requested')!;
    return {
      approvalId: String(requested.payload.approvalId),
      proposalHash: String(requested.payload.proposalHash),
    };
  };

  const forgeWith = (events: readonly TraceEvent[], name: string) => {
    const signed = signAs(requestOf(events), name);
    return rewriteEvents(events, (list) =>
      list.map((event) => {
        if (event.type === 'approval_decided' && event.payload.approver === 'bob') {
          event.payload.approver = name;
          event.payload.signed = {
            statement: signed.statement,
            keyId: signed.keyId,
            signature: signed.signature,
            publicKey: Buffer.from(ed.getPublicKey(testKey(name))).toString('base64'),
          };
        }
        return event;
      }),
    );
  };

  const sponsored = (approvers: TrustedApprover[], sponsors: Record<string, string>) =>
    approvers.map((approver) =>
      sponsors[approver.id]
        ? {
            ...approver,
            keys: approver.keys.map((key) => ({ ...key, sponsor: sponsors[approver.id] })),
          }
        : approver,
    );

  it("replaces bob's approval with one by erin-ops (sponsor erin, whose key alice's invitation enrolled): the dual approval does not hold", async () => {
    const { events, threadId } = await paidThread('t-sponsor-chain-offline');
    const forged = forgeWith(events, 'erin-ops');
    const approvers = sponsored(trustedApprovers(['alice', 'bob', 'erin', 'erin-ops']), {
      erin: 'alice',
      'erin-ops': 'erin',
    });
    const result = verifyResealed(threadId, forged, approvers);
    expect(result.decisions.find((check) => check.approver === 'erin-ops')?.status).toBe('valid');
    expect(result.valid).toBe(false);
  });

  it('control: erin-ops without a sponsor chain back to alice (erin unsponsored) is a second person, and the re-sealed bundle verifies', async () => {
    const { events, threadId } = await paidThread('t-sponsor-chain-control');
    const forged = forgeWith(events, 'erin-ops');
    const approvers = sponsored(trustedApprovers(['alice', 'bob', 'erin', 'erin-ops']), {
      'erin-ops': 'erin',
    });
    expect(verifyResealed(threadId, forged, approvers).valid).toBe(true);
  });
});
