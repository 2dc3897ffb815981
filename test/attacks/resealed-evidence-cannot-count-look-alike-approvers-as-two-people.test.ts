import { describe, expect, it } from 'vitest';
import { signAs, trustedApprovers } from '../support/approvers.js';
import { paidThread } from '../support/paid-thread.js';
import { rewriteEvents } from '../support/rechain.js';
import { verifyResealed } from '../support/resealed-bundle.js';

/**
 * Adversary: an insider who holds the audit table and the agent's evidence key (re-chains and
 * re-seals), and who got a look-alike approver "аlice" (Cyrillic а) sealed into the directory
 * (see insider-identity-key-edit-cannot-let-a-look-alike-approver-be-sealed.test.ts), so
 * the auditor's `approvers.json` lists both "alice" and "аlice". She holds "аlice"'s key only.
 *
 * Guarantee under attack (THREAT-MODEL rules of thumb: "Compare identities only in canonical
 * form … confusable skeleton"; README "Who approved what, provable offline": every approval
 * "had its quorum" of distinct approvers). Online, `prove` counts "alice" and "аlice" as one
 * person. The offline verifier compared approver ids as exact strings, so a dual approval by
 * alice and "аlice" — which the running gate would never have executed — verified. It now
 * counts approvers, sponsors and proposers by identity key (src/audit/same-person.ts). The
 * tests assert the SECURE outcome.
 */
describe('a re-sealed bundle cannot count one identity twice under look-alike names', () => {
  it('replaces bob\'s approval of the paid transfer with one by "аlice": alice and "аlice" are one person, the dual approval does not hold', async () => {
    const { events, threadId } = await paidThread('t-lookalike-quorum');
    const requested = events.find((event) => event.type === 'approval_requested')!;
    const request = {
      approvalId: String(requested.payload.approvalId),
      proposalHash: String(requested.payload.proposalHash),
    };
    const impostor = signAs(request, '\u0430lice');
    const forged = rewriteEvents(events, (list) =>
      list.map((event) => {
        if (event.type === 'approval_decided' && event.payload.approver === 'bob') {
          event.payload.approver = '\u0430lice';
          event.payload.approverName = 'Alice';
          event.payload.signed = {
            statement: impostor.statement,
            keyId: impostor.keyId,
            signature: impostor.signature,
            publicKey: Buffer.from(
              trustedApprovers(['\u0430lice'])[0]!.keys[0]!.publicKey,
              'base64',
            ).toString('base64'),
          };
        }
        return event;
      }),
    );
    const approvers = trustedApprovers(['alice', 'bob', '\u0430lice']);
    const result = verifyResealed(threadId, forged, approvers);
    // The forged decision itself verifies (a real key of a trusted approver) …
    expect(result.decisions.find((check) => check.approver === '\u0430lice')?.status).toBe('valid');
    // … but one identity is one vote.
    expect(result.valid).toBe(false);
  });

  it('a request whose recorded proposers name "аlice" does not count alice\'s approval: a look-alike proposer is the proposer', async () => {
    const { events, threadId } = await paidThread('t-lookalike-proposer');
    const forged = rewriteEvents(events, (list) =>
      list.map((event) => {
        if (event.type === 'approval_requested') {
          const proposers = Array.isArray(event.payload.proposers) ? event.payload.proposers : [];
          event.payload.proposers = [...proposers, '\u0430lice'];
        }
        return event;
      }),
    );
    const result = verifyResealed(threadId, forged, trustedApprovers(['alice', 'bob']));
    expect(result.valid).toBe(false);
    expect(result.reasons.join('\n')).toMatch(
      /1 verifying approval\(s\) by distinct non-proposers/,
    );
  });

  it('control: bob replaced by carol (a distinct trusted approver) verifies', async () => {
    const { events, threadId } = await paidThread('t-lookalike-control');
    const requested = events.find((event) => event.type === 'approval_requested')!;
    const carol = signAs(
      {
        approvalId: String(requested.payload.approvalId),
        proposalHash: String(requested.payload.proposalHash),
      },
      'carol',
    );
    const forged = rewriteEvents(events, (list) =>
      list.map((event) => {
        if (event.type === 'approval_decided' && event.payload.approver === 'bob') {
          event.payload.approver = 'carol';
          event.payload.signed = {
            statement: carol.statement,
            keyId: carol.keyId,
            signature: carol.signature,
            publicKey: trustedApprovers(['carol'])[0]!.keys[0]!.publicKey,
          };
        }
        return event;
      }),
    );
    expect(
      verifyResealed(threadId, forged, trustedApprovers(['alice', 'bob', 'carol'])).valid,
    ).toBe(true);
  });
});
