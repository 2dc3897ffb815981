import * as ed from '@noble/ed25519';
import { afterEach, describe, expect, it } from 'vitest';
import { ApprovalManager } from '../../src/approvals/index.js';
import { ed25519KeyId } from '../../src/audit/ed25519-signer.js';
import { signLogin } from '../../src/server/index.js';
import { signAs, testApproverInits, testKey } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';
import { startTestInbox, type TestInbox } from '../support/inbox.js';
import { approvalsIn, escalate, transferProposal } from '../support/proposals.js';
import { SoftAuthenticator } from '../support/soft-authenticator.js';

/**
 * Defended attempts of the approvals re-pass on the approvals path (controls; the attacks of the
 * same pass that still work are the `*.open-attack.ts` files named in OPEN-ATTACKS.md). Each
 * test plays one adversary and asserts the secure outcome, which holds today:
 * - a replayer carrying a signed decision to the next revision of the same call;
 * - a second process racing decisions (one approver twice, an approval against a rejection,
 *   one signed statement posted twice to the inbox);
 * - a stale session: the key that opened it revoked while its approver keeps another one; an
 *   expired session row whose deadline an insider moves forward;
 * - an inbox admin re-enabling a revoked approver through an invitation, or inviting a
 *   look-alike (Cyrillic letter, zero-width space) of an approver who holds a key;
 * - malformed HTTP input to the inbox (oversized bodies: see
 *   `the-inbox-answers-oversized-bodies-413-not-as-a-server-fault.open-attack.ts`).
 */
describe('a replayer who carries a signed decision to the next revision of the same call', () => {
  it("alice's approval of revision 0 does not count on revision 1 (the edited proposal)", async () => {
    const manager = new ApprovalManager({ approvers: testApproverInits(['alice', 'bob']) });
    const decision = escalate('human_required');
    const first = await manager.request(transferProposal('th-revisions'), decision);
    const signed = signAs(first, 'alice');
    const edited = transferProposal('th-revisions', 'call_1', 'INV-9999');
    const second = await manager.request(edited, decision, { revision: 1 });
    expect(second.id).not.toBe(first.id);
    await expect(manager.decide(second.id, signed)).rejects.toMatchObject({
      code: 'decision_mismatch',
    });
    // Even with the statement's approval id rewritten, the signature no longer verifies.
    const moved = { ...signed, statement: { ...signed.statement, approvalId: second.id } };
    await expect(manager.decide(second.id, moved)).rejects.toMatchObject({
      code: 'decision_signature_invalid',
    });
    const proof = await manager.prove(await manager.require(second.id), edited, decision);
    expect(proof.proven).toBe(false);
  });
});

describeEachDatabase('a second process racing decisions', (context) => {
  const managers = async () => {
    const approvers = testApproverInits(['alice', 'bob']);
    const other = await context.open();
    return [approvalsIn(context.db(), { approvers }), approvalsIn(other, { approvers })] as const;
  };

  it('alice sends two fresh statements through two processes at once: one counts, the other is approver_duplicate', async () => {
    const [a, b] = await managers();
    const proposal = transferProposal('th-race-twice');
    const decision = escalate('dual_approval');
    const request = await a.request(proposal, decision);
    const outcomes = await Promise.allSettled([
      a.decide(request.id, signAs(request, 'alice')),
      b.decide(request.id, signAs(request, 'alice')),
    ]);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    const refused = outcomes.find((outcome) => outcome.status === 'rejected') as
      | PromiseRejectedResult
      | undefined;
    expect(refused?.reason).toMatchObject({ code: 'approver_duplicate' });
    const stored = await a.require(request.id);
    expect(stored.status).toBe('pending');
    expect(stored.decisions).toHaveLength(1);
    expect((await a.prove(stored, proposal, decision)).proven).toBe(false);
  });

  it("alice's approval and bob's rejection race on a one-approver request: exactly one decision counts, and a rejection is never followed by a proof", async () => {
    const [a, b] = await managers();
    const proposal = transferProposal('th-race-reject');
    const decision = escalate('human_required');
    const request = await a.request(proposal, decision);
    await Promise.allSettled([
      a.decide(request.id, signAs(request, 'alice')),
      b.decide(request.id, signAs(request, 'bob', 'reject')),
    ]);
    const stored = await a.require(request.id);
    // human_required: the first decision resolves it; the other is approval_already_decided.
    expect(stored.decisions).toHaveLength(1);
    if (stored.status === 'approved') {
      expect(stored.decisions[0]!.approver).toBe('alice');
    } else {
      expect(stored.status).toBe('rejected');
      expect((await a.prove(stored, proposal, decision)).proven).toBe(false);
    }
  });
});

describeEachDatabase(
  'the inbox against replays, stale sessions, admins and malformed input',
  (context) => {
    let inbox: TestInbox | undefined;
    afterEach(async () => {
      await inbox?.close();
      inbox = undefined;
    });

    const post = (
      path: string,
      body: unknown,
      token?: string,
      headers: Record<string, string> = {},
    ) =>
      inbox!.call(path, {
        method: 'POST',
        body: typeof body === 'string' ? body : JSON.stringify(body),
        headers,
        ...(token ? { token } : {}),
      });

    it('one signed statement posted twice at once counts once (the other is decision_nonce_reused)', async () => {
      inbox = await startTestInbox(context.db());
      const request = await inbox.manager.request(
        transferProposal('th-inbox-double-post'),
        escalate('dual_approval'),
      );
      const { token } = await inbox.login('alice');
      const signed = signAs(request, 'alice');
      const statuses = (
        await Promise.all([
          post(`/api/approvals/${request.id}/decisions`, signed, token),
          post(`/api/approvals/${request.id}/decisions`, signed, token),
        ])
      ).map((response) => response.status);
      expect(statuses.sort()).toEqual([200, 409]);
      expect((await inbox.manager.require(request.id)).decisions).toHaveLength(1);
    });

    it('a session ends when the key that opened it is revoked, though its approver keeps another key', async () => {
      inbox = await startTestInbox(context.db());
      const { token } = await inbox.login('alice');
      await inbox.directory.addKey('alice', ed.getPublicKey(testKey('alice-laptop')));
      await inbox.directory.revoke('alice', {
        keyId: ed25519KeyId(ed.getPublicKey(testKey('alice'))),
      });
      expect((await inbox.call('/api/session', { token })).status).toBe(401);
      // Her other key still signs her in (the revocation was of one key, not of alice).
      const challenge = (await (await post('/api/auth/challenge', {})).json()) as {
        challenge: string;
        audience: string;
      };
      const login = signLogin({ approver: 'alice', ...challenge }, testKey('alice-laptop'));
      expect((await post('/api/auth/key', login)).status).toBe(200);
    });

    it("an insider who moves an expired session row's expires_at forward opens nothing (the seal covers it)", async () => {
      inbox = await startTestInbox(context.db(), { sessionTtlMs: 800 });
      const { token } = await inbox.login('bob');
      await new Promise((resolve) => setTimeout(resolve, 1200));
      expect((await inbox.call('/api/session', { token })).status).toBe(401);
      await context
        .db()
        .query(`UPDATE veridex_inbox_sessions SET expires_at = now() + interval '1 hour'`);
      expect((await inbox.call('/api/session', { token })).status).toBe(401);
    });

    it('an admin cannot re-enable a revoked approver by inviting them (any spelling)', async () => {
      inbox = await startTestInbox(context.db());
      await inbox.directory.revoke('bob');
      const admin = await inbox.login('alice');
      const invited = await post('/api/invitations', { approver: 'BOB' }, admin.token);
      const link =
        invited.status === 200 ? ((await invited.json()) as { link: string }).link : undefined;
      if (link) {
        const invitation = link.slice(link.lastIndexOf('/') + 1);
        const options = await post('/api/passkeys/register/options', { invitation });
        expect(options.status).toBe(410);
      }
      const bob = (await inbox.directory.get('bob'))!;
      expect(bob.revokedAt).toBeDefined();
      expect(bob.keys.every((key) => key.type === 'ed25519')).toBe(true);
    });

    it('an admin who invites a look-alike of bob (Cyrillic о, zero-width space) cannot enrol her passkey as bob', async () => {
      inbox = await startTestInbox(context.db());
      const admin = await inbox.login('alice');
      for (const name of ['b\u043eb', 'bob\u200b', ' BOB ']) {
        const invited = await post('/api/invitations', { approver: name }, admin.token);
        if (invited.status !== 200) {
          expect(invited.status).toBeGreaterThanOrEqual(400);
          continue;
        }
        const link = ((await invited.json()) as { link: string }).link;
        const invitation = link.slice(link.lastIndexOf('/') + 1);
        const device = new SoftAuthenticator(inbox.server.origin);
        const options = await (await post('/api/passkeys/register/options', { invitation })).json();
        const registered = await post('/api/passkeys/register', {
          invitation,
          response: device.register(options),
        });
        expect(registered.status).toBe(403);
      }
      expect((await inbox.directory.get('bob'))!.keys).toHaveLength(1);
      // No second approver reading as bob was added.
      expect(await inbox.directory.get('b\u043eb')).toMatchObject({ id: 'bob' });
    });

    it('malformed input (not JSON, an array, an over-long reason, an unknown statement field, a bare name, a bad cursor or status) is refused with 4xx and the service keeps answering', async () => {
      inbox = await startTestInbox(context.db());
      const request = await inbox.manager.request(
        transferProposal('th-malformed'),
        escalate('dual_approval'),
      );
      const { token } = await inbox.login('alice');
      const decisions = `/api/approvals/${request.id}/decisions`;
      const json = { 'content-type': 'application/json' };
      const statuses: Record<string, number> = {};
      statuses.notJson = (await post(decisions, '{"statement":', token, json)).status;
      statuses.array = (await post(decisions, '[]', token, json)).status;
      const longReason = signAs(request, 'alice', 'approve', { reason: 'r'.repeat(4001) });
      statuses.longReason = (await post(decisions, longReason, token)).status;
      const unknownField = signAs(request, 'alice');
      statuses.unknownField = (
        await post(
          decisions,
          { ...unknownField, statement: { ...unknownField.statement, tier: 1 } },
          token,
        )
      ).status;
      const bareName = { decision: 'approve', approver: 'alice' };
      statuses.bareName = (await post(decisions, bareName, token)).status;
      statuses.badCursor = (await inbox.call('/api/approvals?cursor=%%%', { token })).status;
      statuses.badStatus = (await inbox.call('/api/approvals?status=%00', { token })).status;
      for (const [input, status] of Object.entries(statuses)) {
        expect([input, status >= 400 && status < 500]).toEqual([input, true]);
      }
      expect((await inbox.manager.require(request.id)).decisions).toHaveLength(0);
      expect((await inbox.call('/api/session', { token })).status).toBe(200);
    });
  },
);
