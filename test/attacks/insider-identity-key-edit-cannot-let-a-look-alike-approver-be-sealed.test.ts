import { afterEach, expect, it } from 'vitest';
import { ApprovalManager } from '../../src/approvals/index.js';
import { identityKey, webauthnKeyId } from '../../src/identity/index.js';
import { describeEachDatabase } from '../support/databases.js';
import { postToInbox, startTestInbox, type TestInbox } from '../support/inbox.js';
import { escalate, transferProposal } from '../support/proposals.js';
import { SoftAuthenticator } from '../support/soft-authenticator.js';

/**
 * Adversary: an insider with psql write access to the directory tables (no directory key, no
 * approver key), who gets a look-alike name through the ordinary enrolment path — here an honest
 * admin inviting "аlice" (Cyrillic а) as a ticket asked, the link going to the requester.
 *
 * Guarantee under attack (README "One identity per person": "a second approver by such a name is
 * refused (`identity_ambiguous`)"; "The database is not the authority: the directory key is"):
 * the directory never holds two SEALED approvers that are one identity, and an allowlist naming
 * alice admits only alice.
 *
 * The uniqueness check that stops a confusable second approver is the database's unique index
 * on the UNSEALED `identity_key` column (and `get()` selects on it too). The insider moves alice's
 * `identity_key` away; alice still works (her sealed id is matched exactly), but the inbox's
 * `directory.get('аlice')` no longer finds her and `add()` inserts and SEALS "аlice". Every rule
 * compares identities by skeleton, so "аlice" now satisfies `allow: ['alice']`. Adding an
 * approver now checks the name against every SEALED approver's own id by identity key
 * (postgres-approver-directory.ts), so the column no longer decides. Each test asserts the
 * SECURE outcome.
 */
interface Browser {
  cookie: string;
  csrfToken: string;
  device: SoftAuthenticator;
}

const LOOKALIKE = '\u0430lice';

describeEachDatabase(
  'an insider who frees alice’s identity_key before a look-alike is invited',
  (context) => {
    let inbox: TestInbox | undefined;
    afterEach(async () => {
      await inbox?.close();
      inbox = undefined;
    });

    const post = (path: string, body: unknown, browser?: Browser, token?: string) =>
      postToInbox(inbox!, path, body, browser, token);

    it('the look-alike "аlice" is refused as a second approver, and cannot approve a transfer only alice may approve', async () => {
      const db = context.db();
      inbox = await startTestInbox(db);
      // Only alice may approve large transfers.
      const treasury = new ApprovalManager({
        db,
        audit: inbox.audit,
        approvers: inbox.directory,
        operators: ['carol'],
        allow: { human_required: ['alice'] },
      });
      const proposal = transferProposal('th-lookalike');
      const decision = escalate('human_required');
      const request = await treasury.request(proposal, decision);
      await db.query(`UPDATE veridex_approvers SET identity_key = 'moved' WHERE id = 'alice'`);
      // alice is still alice for every lookup by her exact id.
      expect((await inbox.directory.get('alice'))?.id).toBe('alice');
      // The admin (bob is not one; alice is — any admin will do) invites the name from the ticket.
      const admin = await inbox.login('alice');
      const invited = await post(
        '/api/invitations',
        { approver: LOOKALIKE },
        undefined,
        admin.token,
      );
      // The invitation is refused: "аlice" is alice to every rule.
      expect(invited.status).toBe(409);
      expect(((await invited.clone().json()) as { error: { code: string } }).error.code).toBe(
        'identity_ambiguous',
      );
      if (invited.status === 200) {
        const { link } = (await invited.json()) as { link: string };
        const invitation = link.slice(link.lastIndexOf('/') + 1);
        const device = new SoftAuthenticator(inbox.server.origin);
        const options = await (await post('/api/passkeys/register/options', { invitation })).json();
        const registered = await post('/api/passkeys/register', {
          invitation,
          response: device.register(options),
        });
        expect(registered.status, await registered.clone().text()).toBe(200);
        const browser: Browser = {
          device,
          cookie: registered.headers.get('set-cookie')!.split(';')[0]!,
          csrfToken: ((await registered.json()) as { csrfToken: string }).csrfToken,
        };
        const prepared = await post(
          `/api/approvals/${request.id}/passkey-challenge`,
          { decision: 'approve' },
          browser,
        );
        const { statement, options: assertOptions } = (await prepared.json()) as {
          statement: unknown;
          options: unknown;
        };
        const assertion = device.assert(assertOptions);
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
          browser,
        );
      }
      // The directory holds one sealed approver per identity …
      const sealed = (await inbox.directory.list()).filter(
        (approver) => identityKey(approver.id) === identityKey('alice'),
      );
      expect(sealed.map((approver) => approver.id)).toEqual(['alice']);
      // … and the transfer only alice may approve is not approved by someone else.
      const proof = await treasury.prove(await treasury.require(request.id), proposal, decision);
      expect(proof.proven).toBe(false);
    });

    it('the library’s own add (what `veridex approvers add` runs) refuses "аlice" the same way, whatever the identity_key column says', async () => {
      const db = context.db();
      inbox = await startTestInbox(db);
      await db.query(`UPDATE veridex_approvers SET identity_key = 'moved' WHERE id = 'alice'`);
      await expect(inbox.directory.add({ id: LOOKALIKE })).rejects.toMatchObject({
        code: 'identity_ambiguous',
        message: expect.stringContaining('looks like the existing approver "alice"'),
      });
      // The revoked alice still holds her name.
      await inbox.directory.revoke('alice');
      await expect(inbox.directory.add({ id: LOOKALIKE })).rejects.toMatchObject({
        code: 'identity_ambiguous',
      });
    });

    it('control: an insider’s unsealed look-alike row does not block adding the real name', async () => {
      const db = context.db();
      inbox = await startTestInbox(db);
      await db.query(
        `INSERT INTO veridex_approvers (id, identity_key, display_name, roles, added_at, seal)
         VALUES ('\u0435rin', 'elsewhere', 'Erin', '[]', now(), NULL)`,
      );
      const erin = await inbox.directory.add({ id: 'erin', displayName: 'Erin' });
      expect(erin.id).toBe('erin');
      expect((await inbox.directory.get('erin'))?.id).toBe('erin');
    });
  },
);
