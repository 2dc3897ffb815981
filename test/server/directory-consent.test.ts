// Attack tests for issue 29: an inbox admin enrolling a credential for someone else, and sessions
// and event streams outliving the credential, the approver or the sign-out that should end them.
import { afterEach, expect, it } from 'vitest';
import {
  DIRECTORY_AUDIT_THREAD,
  type DirectoryChangeStatement,
  readDirectoryChanges,
  signDirectoryChange,
  webauthnKeyId,
} from '../../src/identity/index.js';
import { signAs, testKey } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';
import { openEventStream, startTestInbox, type TestInbox } from '../support/inbox.js';
import { escalate, transferProposal } from '../support/proposals.js';
import { SoftAuthenticator } from '../support/soft-authenticator.js';

describeEachDatabase('directory changes only with the owner’s consent', (context) => {
  let inbox: TestInbox | undefined;
  afterEach(async () => {
    await inbox?.close();
    inbox = undefined;
  });

  async function errorCode(response: Response): Promise<string> {
    const body = (await response.json()) as { error?: { code: string } };
    return body.error?.code ?? `no error (status ${response.status})`;
  }

  const post = (path: string, body: unknown, token?: string) =>
    inbox!.call(path, {
      method: 'POST',
      body: JSON.stringify(body),
      ...(token ? { token } : {}),
    });

  /** alice (admin) invites `name` from the inbox; returns the invitation token. */
  async function invite(name: string): Promise<string> {
    const admin = await inbox!.login('alice');
    const response = await post('/api/invitations', { approver: name }, admin.token);
    expect(response.status, await response.clone().text()).toBe(200);
    const { link } = (await response.json()) as { link: string };
    return link.slice(link.lastIndexOf('/') + 1);
  }

  /** The registration response a fresh authenticator makes for `invitation`. */
  async function register(invitation: string, authenticator: SoftAuthenticator) {
    const options = await (await post('/api/passkeys/register/options', { invitation })).json();
    return authenticator.register(options) as { id: string };
  }

  /** The enrolment statement the service asks the approver's existing credential to sign. */
  async function proofChallenge(invitation: string, credentialId: string) {
    const response = await post('/api/passkeys/register/proof-challenge', {
      invitation,
      credentialId,
    });
    expect(response.status, await response.clone().text()).toBe(200);
    return (await response.json()) as {
      statement: DirectoryChangeStatement;
      options: { challenge: string; allowCredentials: Array<{ id: string }> };
    };
  }

  it('refuses an admin who enrols her own passkey as an existing approver (one person, two votes)', async () => {
    inbox = await startTestInbox(context.db());
    const invitation = await invite('bob');
    const alicesDevice = new SoftAuthenticator(inbox.server.origin);
    const response = await register(invitation, alicesDevice);
    const unproven = await post('/api/passkeys/register', { invitation, response });
    expect(unproven.status).toBe(403);
    expect(await errorCode(unproven)).toBe('enrolment_unproven');

    // Alice proving the enrolment with her own key does not make it bob's consent.
    const again = await register(invitation, alicesDevice);
    const { statement } = await proofChallenge(invitation, again.id);
    const forged = await post('/api/passkeys/register', {
      invitation,
      response: again,
      proof: { statement, ...signDirectoryChange(statement, testKey('alice')) },
    });
    expect(forged.status).toBe(403);
    expect(await errorCode(forged)).toBe('enrolment_unproven');
    const bob = await inbox.directory.get('bob');
    expect(bob?.keys.map((key) => key.type)).toEqual(['ed25519']);

    // So a dual approval still needs bob himself.
    const request = await inbox.manager.request(
      transferProposal('th-two-votes'),
      escalate('dual_approval'),
    );
    await inbox.manager.decide(request.id, signAs(request, 'alice'));
    expect((await inbox.manager.require(request.id)).status).toBe('pending');
  });

  it('lets an existing approver add a passkey by proving with a key he already holds, once, audited', async () => {
    inbox = await startTestInbox(context.db());
    const invitation = await invite('bob');
    const bobsPhone = new SoftAuthenticator(inbox.server.origin);
    const response = await register(invitation, bobsPhone);
    const { statement } = await proofChallenge(invitation, response.id);
    expect(statement).toMatchObject({
      change: 'key_added',
      approver: 'bob',
      keyId: webauthnKeyId(response.id),
      audience: inbox.server.origin,
    });
    const proof = { statement, ...signDirectoryChange(statement, testKey('bob')) };
    const added = await post('/api/passkeys/register', { invitation, response, proof });
    expect(added.status, await added.clone().text()).toBe(200);
    const bob = await inbox.directory.get('bob');
    expect(bob?.keys.map((key) => key.type)).toEqual(['ed25519', 'webauthn']);

    // The proof is one use: a second enrolment cannot reuse it.
    const second = await invite('bob');
    const replayed = await post('/api/passkeys/register', {
      invitation: second,
      response: await register(second, new SoftAuthenticator(inbox.server.origin)),
      proof,
    });
    expect(replayed.status).toBe(403);
    expect(await errorCode(replayed)).toBe('enrolment_unproven');

    const changes = readDirectoryChanges(await inbox.audit.events(DIRECTORY_AUDIT_THREAD));
    expect(changes.problems).toEqual([]);
    const keyAdded = changes.changes.find(
      (change) => change.change === 'key_added' && change.keyId === webauthnKeyId(response.id),
    );
    expect(keyAdded).toMatchObject({
      approver: 'bob',
      authorisedBy: { via: 'credential', approver: 'bob', keyId: proof.keyId },
      proofVerified: true,
    });
    expect(keyAdded?.description).toContain(`added to bob`);
    expect(keyAdded?.description).toContain(`by bob (proved with key ${proof.keyId})`);
  });

  it('enrols a second passkey for an approver who proves with her first passkey', async () => {
    inbox = await startTestInbox(context.db());
    const first = await invite('dave');
    const laptop = new SoftAuthenticator(inbox.server.origin);
    const created = await post('/api/passkeys/register', {
      invitation: first,
      response: await register(first, laptop),
    });
    expect(created.status, await created.clone().text()).toBe(200);

    const second = await invite('dave');
    const phone = new SoftAuthenticator(inbox.server.origin);
    const response = await register(second, phone);
    const { statement, options } = await proofChallenge(second, response.id);
    const assertion = laptop.assert(options);
    const added = await post('/api/passkeys/register', {
      invitation: second,
      response,
      proof: {
        statement,
        keyId: webauthnKeyId(assertion.id),
        signature: assertion.response.signature,
        webauthn: {
          authenticatorData: assertion.response.authenticatorData,
          clientDataJSON: assertion.response.clientDataJSON,
        },
      },
    });
    expect(added.status, await added.clone().text()).toBe(200);
    // Both keys speak for alice too: the first came unproven on her invitation, the second was
    // proven by the first — whoever holds one holds the other (no laundering the sponsor).
    expect((await inbox.directory.get('dave'))?.keys.map((key) => key.sponsor)).toEqual([
      'alice',
      'alice',
    ]);
    const changes = readDirectoryChanges(await inbox.audit.events(DIRECTORY_AUDIT_THREAD));
    expect(changes.problems).toEqual([]);
    expect(changes.changes.map((change) => `${change.change} ${change.approver}`)).toEqual([
      'approver_added dave',
      'key_added dave',
      'key_added dave',
    ]);
    // The first key came with alice's invitation (dave held nothing yet); the second with
    // dave's own signature by his first passkey.
    expect(changes.changes[1]?.authorisedBy).toMatchObject({ via: 'session', approver: 'alice' });
    expect(changes.changes[2]).toMatchObject({
      authorisedBy: {
        via: 'credential',
        approver: 'dave',
        keyId: webauthnKeyId(laptop.credentials[0]!.id),
      },
      proofVerified: true,
    });
  });

  it('refuses enrolment for an approver whose keys were all revoked (revoke, then re-add)', async () => {
    inbox = await startTestInbox(context.db());
    const bob = await inbox.directory.get('bob');
    await inbox.directory.revoke('bob', { keyId: bob!.keys[0]!.keyId });
    const invitation = await invite('bob');
    const response = await register(invitation, new SoftAuthenticator(inbox.server.origin));
    const refused = await post('/api/passkeys/register', { invitation, response });
    expect(refused.status).toBe(403);
    expect(await errorCode(refused)).toBe('enrolment_unproven');
    expect((await inbox.directory.get('bob'))?.keys).toHaveLength(1);
  });

  it("ends a session on the very next request once its key is revoked, and the admin's too", async () => {
    inbox = await startTestInbox(context.db());
    const bob = await inbox.login('bob');
    expect((await inbox.call('/api/session', { token: bob.token })).status).toBe(200);
    const alice = await inbox.login('alice');
    const keyOf = async (name: string) => (await inbox!.directory.get(name))!.keys[0]!.keyId;
    await inbox.directory.revoke('bob', { keyId: await keyOf('bob') });
    const after = await inbox.call('/api/session', { token: bob.token });
    expect(after.status).toBe(401);
    expect(await errorCode(after)).toBe('auth_required');

    await inbox.directory.revoke('alice', { keyId: await keyOf('alice') });
    const invited = await post('/api/invitations', { approver: 'zed' }, alice.token);
    expect(invited.status).toBe(401);
    expect(await inbox.directory.get('zed')).toBeUndefined();
  });

  it('closes an event stream at its next event after sign-out, delivering nothing more', async () => {
    inbox = await startTestInbox(context.db());
    const bob = await inbox.login('bob');
    const stream = await openEventStream(`${inbox.server.url}/api/events`, bob.token);
    try {
      await stream.next((event) => event.event === 'ready');
      const out = await post('/api/auth/logout', {}, bob.token);
      expect(out.status).toBe(200);
      const request = await inbox.manager.request(
        transferProposal('th-after-logout'),
        escalate('dual_approval'),
      );
      await stream.ended;
      expect(stream.events.some((event) => event.data.includes(request.id))).toBe(false);
    } finally {
      stream.close();
    }
  });

  it('closes an event stream at its next event once the approver is revoked', async () => {
    inbox = await startTestInbox(context.db());
    const bob = await inbox.login('bob');
    const stream = await openEventStream(`${inbox.server.url}/api/events`, bob.token);
    try {
      await stream.next((event) => event.event === 'ready');
      await inbox.directory.revoke('bob');
      const request = await inbox.manager.request(
        transferProposal('th-after-revoke'),
        escalate('dual_approval'),
      );
      await stream.ended;
      expect(stream.events.some((event) => event.data.includes(request.id))).toBe(false);
    } finally {
      stream.close();
    }
  });
});
