import * as ed from '@noble/ed25519';
import { describe, expect, it } from 'vitest';
import { ApprovalManager } from '../../src/approvals/index.js';
import { AuditLog, MemoryAuditStore } from '../../src/audit/index.js';
import { signAs, testApproverInits, testKey, trustedApprovers } from '../support/approvers.js';
import { paidThread } from '../support/paid-thread.js';
import { escalate, transferProposal } from '../support/proposals.js';
import { rewriteEvents } from '../support/rechain.js';
import { verifyResealed } from '../support/resealed-bundle.js';

/**
 * Adversary: an approver (or a caller of the resume/decision API holding an approver's key
 * legitimately) who signs their statement with another spelling of their own id — `ALICE`,
 * ` alice`, `аlice` — which `authenticateDecision` accepts (`sameIdentity`), while the
 * `approval_decided` event records the directory's canonical id `alice` beside the statement.
 *
 * Guarantee under attack (README "Who approved what, provable offline" / "Evidence fails
 * closed"; THREAT-MODEL "Compare identities only in canonical form"): what the running gate
 * counts and what `veridex verify --approvers` counts must be the same people. Offline,
 * `checkOne` (src/audit/verify-decisions.ts) compares `statement.approver !== payload.approver`
 * and looks the trusted key up under the exact statement spelling, so the counted decision is
 * "invalid" and the honest bundle of an honest dual approval (its call ran) is INVALID. It fails
 * closed, so nothing is forged, but any one approver can make every bundle of the threads they
 * decide unverifiable at will (e.g. to discredit evidence of calls they approved), and an honest
 * integrator whose signer passes the id as typed (`Alice@corp.example`) produces evidence that
 * never verifies.
 *
 * Steps: a dual approval; alice signs `signDecision({ …, approver: 'ALICE' })` with her own key,
 * bob signs normally; both count and the request is approved. Seal the thread's events and
 * verify against the exported approvers: invalid ("the statement names another approver").
 *
 * Severity: low (availability of the evidence; no approval is forged).
 *
 * Suggested fix (mechanism): one rule in both places — either `authenticateDecision` refuses a
 * statement whose `approver` is not exactly the directory's canonical id (`decision_mismatch`),
 * or the verifier compares `statement.approver` with the event's approver by `personKey` and
 * finds the trusted approver by identity key (approvers files hold canonical ids).
 */
describe('an approver who signs with another spelling of their own id', () => {
  it('the evidence of a dual approval the gate counted (alice signing as "ALICE", and bob) verifies', async () => {
    const threadId = 'th-spelling';
    const audit = new AuditLog({ store: new MemoryAuditStore() });
    const manager = new ApprovalManager({ audit, approvers: testApproverInits(['alice', 'bob']) });
    const request = await manager.request(transferProposal(threadId), escalate('dual_approval'));
    await manager.decide(request.id, signAs(request, 'alice', 'approve', { approver: 'ALICE' }));
    const decided = await manager.decide(request.id, signAs(request, 'bob'));
    expect(decided.status).toBe('approved');
    const result = verifyResealed(
      threadId,
      await audit.events(threadId),
      trustedApprovers(['alice', 'bob']),
    );
    expect(result.reasons).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('control: a statement by the look-alike "аlice" under an event naming alice is checked against alice\'s keys only', async () => {
    // An approvers file holding both look-alikes (sealed before the directory refused them):
    // the key is looked up under the event's id, so аlice's key never vouches for alice.
    const { events, threadId } = await paidThread('th-spelling-lookalike');
    const twin = '\u0430lice';
    const forged = rewriteEvents(events, (list) =>
      list.map((event) => {
        if (event.type === 'approval_decided' && event.payload.approver === 'bob') {
          const requested = list.find((candidate) => candidate.type === 'approval_requested')!;
          const signed = signAs(
            {
              approvalId: String(requested.payload.approvalId),
              proposalHash: String(requested.payload.proposalHash),
            },
            twin,
          );
          event.payload.approver = 'alice';
          event.payload.signed = {
            statement: signed.statement,
            keyId: signed.keyId,
            signature: signed.signature,
            publicKey: Buffer.from(ed.getPublicKey(testKey(twin))).toString('base64'),
          };
        }
        return event;
      }),
    );
    const result = verifyResealed(threadId, forged, trustedApprovers(['alice', 'bob', twin]));
    expect(result.valid).toBe(false);
    expect(result.reasons.join('\n')).toMatch(/is not a key of "alice"/);
  });

  it('control: the same dual approval signed with the canonical ids verifies', async () => {
    const threadId = 'th-spelling-control';
    const audit = new AuditLog({ store: new MemoryAuditStore() });
    const manager = new ApprovalManager({ audit, approvers: testApproverInits(['alice', 'bob']) });
    const request = await manager.request(transferProposal(threadId), escalate('dual_approval'));
    await manager.decide(request.id, signAs(request, 'alice'));
    await manager.decide(request.id, signAs(request, 'bob'));
    const result = verifyResealed(
      threadId,
      await audit.events(threadId),
      trustedApprovers(['alice', 'bob']),
    );
    expect(result.valid).toBe(true);
  });
});
