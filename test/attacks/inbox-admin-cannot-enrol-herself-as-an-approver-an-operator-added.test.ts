import { afterEach, expect, it } from 'vitest';
import { ApprovalManager } from '../../src/approvals/index.js';
import { AuditLog, PostgresAuditStore } from '../../src/audit/index.js';
import type { Database } from '../../src/db/index.js';
import { PostgresApproverDirectory, webauthnKeyId } from '../../src/identity/index.js';
import { InvitationStore } from '../../src/server/index.js';
import { signAs } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';
import { postToInbox, startTestInbox, type TestInbox } from '../support/inbox.js';
import { escalate, transferProposal } from '../support/proposals.js';
import { SoftAuthenticator } from '../support/soft-authenticator.js';

/**
 * Adversary: alice, an administrator of the inbox (role `admin`, and NOT `treasury`). She holds
 * her own credentials and whatever she enrols through invitations she issues; no database
 * access, no directory key.
 *
 * Guarantee under attack (THREAT-MODEL adversary 7, README "Approvals inbox" and "Security",
 * administrator row): an admin "must never enrol a credential for another person, approve as
 * them"; "Inbox invitations grant no roles … an admin who could give an approver she enrols any
 * role could give herself, through it, any tier's authority"; allowlists (`allow`, `role:<name>`
 * tiers) decide who may approve.
 *
 * Steps: the operator runs the documented `veridex approvers invite dave --role treasury` (dave
 * is added with the role and no key; an operator invitation is printed for him). Before dave
 * opens his link, alice POSTs /api/invitations { approver: "dave" }: dave exists, so nothing is
 * added and an invitation is issued. Dave has never held a key, so `needsConsent` is false and
 * alice's own soft authenticator is enrolled as dave's passkey (sponsor: alice). Signed in as
 * dave, she approves a $50,000 transfer whose route admits only `role:treasury`: the decision
 * counts (alice is not a proposer and the sponsor rule only stops her counting twice in one
 * quorum), `prove` re-verifies it, and the call would run. Alice alone approved a call she is
 * not allowed to approve. Second test: dave's own (operator) link now fails with
 * `enrolment_unproven` — he needs the consent of a key of "his" that alice holds — so the admin
 * also locked the real person out of his identity.
 *
 * Severity: high (an inbox admin acquires every role the operator grants to approvers who have
 * not enrolled yet, and can pre-empt their enrolment; single-approver routes restricted by role
 * fall to her alone).
 *
 * Suggested fix (mechanism): an inbox invitation must only enrol an approver the same
 * invitation created (a brand-new, role-less id), never an existing directory entry — for an
 * existing one, require the operator's (unsponsored, CLI) invitation or the approver's own
 * consent; alternatively make a sponsored key carry no roles beyond the intersection with its
 * sponsor's (mayDecideAt on a sponsored decision checks the sponsor chain's roles too), and
 * make an open operator invitation exclusive (an inbox invitation for an approver with an
 * unused operator invitation is refused).
 */
interface Browser {
  cookie: string;
  csrfToken: string;
}

describeEachDatabase(
  'an inbox admin who enrols her own passkey as an approver the operator added',
  (context) => {
    let inbox: TestInbox | undefined;
    afterEach(async () => {
      await inbox?.close();
      inbox = undefined;
    });

    const post = (path: string, body: unknown, browser?: Browser, token?: string) =>
      postToInbox(inbox!, path, body, browser, token);

    async function register(link: string, device: SoftAuthenticator) {
      const invitation = link.slice(link.lastIndexOf('/') + 1);
      const options = await (await post('/api/passkeys/register/options', { invitation })).json();
      const registered = await post('/api/passkeys/register', {
        invitation,
        response: device.register(options),
      });
      const browser =
        registered.status === 200
          ? {
              cookie: registered.headers.get('set-cookie')!.split(';')[0]!,
              csrfToken: ((await registered.clone().json()) as { csrfToken: string }).csrfToken,
            }
          : undefined;
      return { status: registered.status, body: await registered.text(), browser };
    }

    /** The inbox over a manager whose human_required route admits only role:treasury. */
    async function treasuryOnlyInbox(db: Database) {
      const approvals = new ApprovalManager({
        db,
        audit: new AuditLog({ store: new PostgresAuditStore(db) }),
        approvers: new PostgresApproverDirectory(db),
        operators: ['carol'],
        allow: { human_required: ['role:treasury'] },
      });
      inbox = await startTestInbox(db, { approvals });
      // `veridex approvers invite dave --role treasury`: dave is added with the role, no key, and
      // the operator's (unsponsored) invitation is issued for him.
      await inbox.directory.add({ id: 'dave', displayName: 'Dave', roles: ['treasury'] });
      const operatorInvitation = await new InvitationStore(db, {
        seal: inbox.directory.seal,
      }).create({ approverId: 'dave', createdBy: { via: 'operator', operator: 'ops-lead' } });
      return { approvals, operatorInvitation };
    }

    it('alice, no treasury role, enrols her passkey as dave (role treasury, not enrolled yet) and alone approves a transfer only treasury may approve', async () => {
      const { approvals } = await treasuryOnlyInbox(context.db());
      const proposal = transferProposal('th-admin-takes-dave');
      const decision = escalate('human_required');
      const request = await approvals.request(proposal, decision);

      const admin = await inbox!.login('alice');
      const forDave = await post('/api/invitations', { approver: 'dave' }, undefined, admin.token);
      // Secure at the first step: the inbox refuses the invitation itself.
      if (forDave.status !== 200) {
        expect(forDave.status).toBe(403);
        expect(await forDave.json()).toMatchObject({ error: { code: 'invitation_not_allowed' } });
        return;
      }
      const alicesDevice = new SoftAuthenticator(inbox!.server.origin);
      const asDave = await register(
        ((await forDave.json()) as { link: string }).link,
        alicesDevice,
      );

      let proven = false;
      if (asDave.browser) {
        const prepared = await post(
          `/api/approvals/${request.id}/passkey-challenge`,
          { decision: 'approve' },
          asDave.browser,
        );
        const { statement, options } = (await prepared.json()) as {
          statement: unknown;
          options: unknown;
        };
        const assertion = alicesDevice.assert(options);
        await post(
          `/api/approvals/${request.id}/decisions`,
          {
            statement,
            keyId: webauthnKeyId(assertion.id),
            signature: assertion.response.signature,
            webauthn: {
              authenticatorData: assertion.response.authenticatorData,
              clientDataJSON: assertion.response.clientDataJSON,
            },
          },
          asDave.browser,
        );
        const proof = await approvals.prove(
          await approvals.require(request.id),
          proposal,
          decision,
        );
        proven = proof.proven;
      }
      // Secure: either the inbox refused to enrol alice's passkey as dave, or her decision as dave
      // does not clear a call only treasury may approve.
      expect(proven).toBe(false);
    });

    it('control: alice signing as herself is refused on that route (approver_not_allowed), so only the identity she took carries the role', async () => {
      const { approvals } = await treasuryOnlyInbox(context.db());
      const request = await approvals.request(
        transferProposal('th-admin-as-herself'),
        escalate('human_required'),
      );
      await expect(approvals.decide(request.id, signAs(request, 'alice'))).rejects.toMatchObject({
        code: 'approver_not_allowed',
      });
    });

    it('control: alice may invite again a new approver she added herself (an expired link), but not one the operator added without roles', async () => {
      inbox = await startTestInbox(context.db());
      const admin = await inbox.login('alice');
      const invite = (approver: string) =>
        post('/api/invitations', { approver }, undefined, admin.token);
      expect((await invite('frank')).status).toBe(200);
      const again = await invite('frank');
      expect(again.status).toBe(200);
      const opened = await register(
        ((await again.json()) as { link: string }).link,
        new SoftAuthenticator(inbox.server.origin),
      );
      expect(opened.status, opened.body).toBe(200);
      await inbox.directory.add({ id: 'gina', displayName: 'Gina' });
      const forGina = await invite('gina');
      expect(forGina.status).toBe(403);
      expect(await forGina.json()).toMatchObject({ error: { code: 'invitation_not_allowed' } });
    });

    it("after alice's enrolment as dave, dave's own operator invitation still enrols him (the admin cannot lock him out of his identity)", async () => {
      const { operatorInvitation } = await treasuryOnlyInbox(context.db());
      const admin = await inbox!.login('alice');
      const forDave = await post('/api/invitations', { approver: 'dave' }, undefined, admin.token);
      if (forDave.status === 200) {
        await register(
          ((await forDave.json()) as { link: string }).link,
          new SoftAuthenticator(inbox!.server.origin),
        );
      }
      // Dave opens the link the operator gave him.
      const davesOwn = await register(
        `${inbox!.server.origin}/#/enrol/${operatorInvitation.token}`,
        new SoftAuthenticator(inbox!.server.origin),
      );
      expect(davesOwn.status, davesOwn.body).toBe(200);
    });
  },
);
