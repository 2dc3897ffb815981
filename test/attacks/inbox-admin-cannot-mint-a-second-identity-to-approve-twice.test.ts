import { afterEach, expect, it } from 'vitest';
import { webauthnKeyId } from '../../src/identity/index.js';
import { signAs } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';
import { postToInbox, startTestInbox, type TestInbox } from '../support/inbox.js';
import { escalate, transferProposal } from '../support/proposals.js';
import { SoftAuthenticator } from '../support/soft-authenticator.js';

/**
 * Adversary: alice, an administrator of the inbox (role `admin`) and herself an approver. She
 * holds only her own credentials: no other approver's key, no directory key, no database access.
 * Guarantee under attack (THREAT-MODEL adversary 7 and 3; README "Enrolment needs the owner's
 * consent", "one identity per person"): an admin must never approve as someone else or count
 * twice as one person — a dual approval needs two people. Each test asserts the secure outcome.
 * Defence: a key enrolled unproven on an admin's invitation carries her as its sponsor (sealed),
 * and a decision speaks for its approver and its key's sponsor; inbox invitations grant no roles.
 */
interface Browser {
  authenticator: SoftAuthenticator;
  cookie: string;
  csrfToken: string;
}

describeEachDatabase('an inbox admin who mints identities', (context) => {
  let inbox: TestInbox | undefined;
  afterEach(async () => {
    await inbox?.close();
    inbox = undefined;
  });

  const post = (path: string, body: unknown, browser?: Browser, token?: string) =>
    postToInbox(inbox!, path, body, browser, token);

  it('invites a brand-new approver "alice-ops" and enrols her own passkey as it: her two votes do not make a dual approval', async () => {
    inbox = await startTestInbox(context.db());
    const request = await inbox.manager.request(
      transferProposal('th-sock-puppet'),
      escalate('dual_approval'),
    );
    // alice, signed in with her own key, invites a new approver (no consent needed: it never held a key).
    const admin = await inbox.login('alice');
    const invited = await post(
      '/api/invitations',
      { approver: 'alice-ops', displayName: 'Treasury Ops' },
      undefined,
      admin.token,
    );
    expect(invited.status, await invited.clone().text()).toBe(200);
    const { link } = (await invited.json()) as { link: string };
    const invitation = link.slice(link.lastIndexOf('/') + 1);
    // She opens the link herself, with her own authenticator.
    const alicesDevice = new SoftAuthenticator(inbox.server.origin);
    const options = await (await post('/api/passkeys/register/options', { invitation })).json();
    const registered = await post('/api/passkeys/register', {
      invitation,
      response: alicesDevice.register(options),
    });
    expect(registered.status, await registered.clone().text()).toBe(200);
    const puppet: Browser = {
      authenticator: alicesDevice,
      cookie: registered.headers.get('set-cookie')!.split(';')[0]!,
      csrfToken: ((await registered.json()) as { csrfToken: string }).csrfToken,
    };
    // Vote one: as alice, with her Ed25519 key.
    await inbox.manager.decide(request.id, signAs(request, 'alice'));
    // Vote two: as "alice-ops", with the passkey she enrolled a minute ago.
    const prepared = await post(
      `/api/approvals/${request.id}/passkey-challenge`,
      { decision: 'approve' },
      puppet,
    );
    expect(prepared.status, await prepared.clone().text()).toBe(200);
    const { statement, options: assertOptions } = (await prepared.json()) as {
      statement: unknown;
      options: unknown;
    };
    const assertion = alicesDevice.assert(assertOptions);
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
      puppet,
    );
    // One person, one vote: the $50,000 transfer still waits for a second human.
    expect((await inbox.manager.require(request.id)).status).toBe('pending');
  });

  it('invites a new approver with a role she wants exercised (treasury): the inbox grants no roles', async () => {
    inbox = await startTestInbox(context.db());
    const admin = await inbox.login('alice');
    const invited = await post(
      '/api/invitations',
      { approver: 'alice-treasury', roles: ['treasury'] },
      undefined,
      admin.token,
    );
    expect(invited.status).toBe(400);
    expect(await inbox.manager.directory.get('alice-treasury')).toBeUndefined();
  });

  it('control: an admin cannot enrol her passkey as an existing approver who holds a key (consent defence)', async () => {
    inbox = await startTestInbox(context.db());
    const admin = await inbox.login('alice');
    const invited = await post('/api/invitations', { approver: 'bob' }, undefined, admin.token);
    const { link } = (await invited.json()) as { link: string };
    const invitation = link.slice(link.lastIndexOf('/') + 1);
    const alicesDevice = new SoftAuthenticator(inbox.server.origin);
    const options = await (await post('/api/passkeys/register/options', { invitation })).json();
    const registered = await post('/api/passkeys/register', {
      invitation,
      response: alicesDevice.register(options),
    });
    expect(registered.status).toBe(403);
  });
});
