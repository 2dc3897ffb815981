import { randomBytes } from 'node:crypto';
import * as ed from '@noble/ed25519';
import { afterEach, expect, it } from 'vitest';
import { ed25519KeyId, sha256Hex } from '../../src/audit/index.js';
import { webauthnKeyId } from '../../src/identity/index.js';
import { signAs, testKey } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';
import { postToInbox, startTestInbox, type TestInbox } from '../support/inbox.js';
import { escalate, transferProposal } from '../support/proposals.js';
import { SoftAuthenticator } from '../support/soft-authenticator.js';

/**
 * Adversary: an insider with psql write access to every table — the approvals, the directory
 * AND the inbox's own tables (`veridex_inbox_sessions`, `veridex_inbox_invitations`) — but no
 * directory key, no approver's private key and no admin credential. She can reach the inbox's
 * HTTP port like any approver's browser.
 *
 * Guarantee under attack (README "Security", insider row: "the approver directory tables are not
 * trusted either … an inserted key or approver … counts nothing"; adversary 7: an invitation
 * key "carries the inviting admin as its sponsor"): an insider cannot mint a key that counts.
 *
 * The directory rows are sealed, but the inbox seals whatever its own tables tell it to: a
 * session row (only its token's SHA-256 is stored, so the insider picks a token and stores its
 * hash) makes her the admin for `POST /api/invitations`; an invitation row makes the inbox
 * enrol her passkey and seal it; and the invitation's unsealed `created_by` column decides the
 * key's sponsor. Each test asserts the SECURE outcome: the approval is not proven.
 */
interface Browser {
  cookie: string;
  csrfToken: string;
  device: SoftAuthenticator;
}

const aliceKeyId = ed25519KeyId(ed.getPublicKey(testKey('alice')));

describeEachDatabase('an insider who writes the inbox tables', (context) => {
  let inbox: TestInbox | undefined;
  afterEach(async () => {
    await inbox?.close();
    inbox = undefined;
  });

  const post = (path: string, body: unknown, browser?: Browser, token?: string) =>
    postToInbox(inbox!, path, body, browser, token);

  /** Opens an invitation link with a fresh authenticator, as whoever holds the link would. */
  async function enrol(invitation: string): Promise<Browser> {
    const device = new SoftAuthenticator(inbox!.server.origin);
    const options = await (await post('/api/passkeys/register/options', { invitation })).json();
    const registered = await post('/api/passkeys/register', {
      invitation,
      response: device.register(options),
    });
    expect(registered.status, await registered.clone().text()).toBe(200);
    return {
      device,
      cookie: registered.headers.get('set-cookie')!.split(';')[0]!,
      csrfToken: ((await registered.json()) as { csrfToken: string }).csrfToken,
    };
  }

  /** Approves `approvalId` with the browser's passkey, through the inbox. */
  async function approveWithPasskey(browser: Browser, approvalId: string) {
    const prepared = await post(
      `/api/approvals/${approvalId}/passkey-challenge`,
      { decision: 'approve' },
      browser,
    );
    expect(prepared.status, await prepared.clone().text()).toBe(200);
    const { statement, options } = (await prepared.json()) as {
      statement: unknown;
      options: unknown;
    };
    const assertion = browser.device.assert(options);
    return post(
      `/api/approvals/${approvalId}/decisions`,
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

  /** A token of the insider's choosing, whose hash she writes where the inbox looks for it. */
  const token = () => randomBytes(32).toString('base64url');

  it('INSERTs a session row for the admin alice (her real key id) and, as alice, invites a new approver and enrols her own passkey: her lone approval does not pass a $50,000 transfer', async () => {
    const db = context.db();
    inbox = await startTestInbox(db);
    const proposal = transferProposal('th-forged-session');
    const decision = escalate('human_required');
    const request = await inbox.manager.request(proposal, decision);
    const session = token();
    await db.query(
      `INSERT INTO veridex_inbox_sessions (token_hash, approver_id, key_id, method, created_at, expires_at)
       VALUES ($1, 'alice', $2, 'ed25519', now(), now() + interval '10 minutes')`,
      [sha256Hex(session), aliceKeyId],
    );
    const invited = await post('/api/invitations', { approver: 'ops-temp' }, undefined, session);
    // The secure outcome may be refusing right here (the session was never opened by a key) …
    if (invited.status === 200) {
      const { link } = (await invited.json()) as { link: string };
      const mine = await enrol(link.slice(link.lastIndexOf('/') + 1));
      await approveWithPasskey(mine, request.id);
    }
    // … but in no case may the insider's approval alone prove the transfer.
    const proof = await inbox.manager.prove(
      await inbox.manager.require(request.id),
      proposal,
      decision,
    );
    expect(proof.proven).toBe(false);
  });

  it("INSERTs an invitation row for dave, an approver the operator added (role and all) who has not enrolled yet, with an operator as its author: her passkey becomes dave's, unsponsored, and approves alone", async () => {
    const db = context.db();
    inbox = await startTestInbox(db);
    // `veridex approvers add dave --role treasury`, then `veridex approvers invite dave` planned.
    await inbox.directory.add({ id: 'dave', displayName: 'Dave', roles: ['treasury'] });
    const proposal = transferProposal('th-forged-invitation');
    const decision = escalate('human_required');
    const request = await inbox.manager.request(proposal, decision);
    const invitation = token();
    await db.query(
      `INSERT INTO veridex_inbox_invitations (token_hash, approver_id, created_by, created_at, expires_at)
       VALUES ($1, 'dave', $2, now(), now() + interval '1 day')`,
      [sha256Hex(invitation), JSON.stringify({ via: 'operator', operator: 'ops-lead' })],
    );
    const registered = await post('/api/passkeys/register/options', { invitation });
    if (registered.status === 200) {
      const mine = await enrol(invitation);
      await approveWithPasskey(mine, request.id);
    }
    const proof = await inbox.manager.prove(
      await inbox.manager.require(request.id),
      proposal,
      decision,
    );
    expect(proof.proven).toBe(false);
  });

  it("breaks the seals of bob's keys (so bob looks like he never held one) and INSERTs an invitation row for bob: her passkey is enrolled as bob without bob's consent and approves as bob", async () => {
    const db = context.db();
    inbox = await startTestInbox(db);
    const proposal = transferProposal('th-consent-bypass');
    const decision = escalate('human_required');
    const request = await inbox.manager.request(proposal, decision);
    // Unsealed keys are dropped from the approver: `needsConsent(bob)` reads an empty list.
    await db.query(`UPDATE veridex_approver_keys SET seal = NULL WHERE approver_id = 'bob'`);
    const invitation = token();
    await db.query(
      `INSERT INTO veridex_inbox_invitations (token_hash, approver_id, created_by, created_at, expires_at)
       VALUES ($1, 'bob', $2, now(), now() + interval '1 day')`,
      [sha256Hex(invitation), JSON.stringify({ via: 'operator', operator: 'ops-lead' })],
    );
    const registered = await post('/api/passkeys/register/options', { invitation });
    if (registered.status === 200) {
      const mine = await enrol(invitation);
      await approveWithPasskey(mine, request.id);
    }
    // No credential was added to bob without bob's own signature …
    const bob = await inbox.directory.get('bob');
    expect(bob?.keys.filter((key) => key.type === 'webauthn') ?? []).toHaveLength(0);
    // … and nobody approved as bob.
    const proof = await inbox.manager.prove(
      await inbox.manager.require(request.id),
      proposal,
      decision,
    );
    expect(proof.proven).toBe(false);
  });

  it("with the admin alice, rewrites her invitation's created_by to an operator before she enrols her own passkey as the new approver: alice and her puppet do not make a dual approval", async () => {
    const db = context.db();
    inbox = await startTestInbox(db);
    const proposal = transferProposal('th-unsponsored');
    const decision = escalate('dual_approval');
    const request = await inbox.manager.request(proposal, decision);
    const admin = await inbox.login('alice');
    const invited = await post(
      '/api/invitations',
      { approver: 'alice-ops' },
      undefined,
      admin.token,
    );
    expect(invited.status).toBe(200);
    const { link } = (await invited.json()) as { link: string };
    const invitation = link.slice(link.lastIndexOf('/') + 1);
    // The insider strips the sponsor: created_by is not sealed.
    await db.query(`UPDATE veridex_inbox_invitations SET created_by = $2 WHERE token_hash = $1`, [
      sha256Hex(invitation),
      JSON.stringify({ via: 'operator', operator: 'ops-lead' }),
    ]);
    // Either the edited invitation enrols nobody, or its key still carries alice as sponsor.
    const options = await post('/api/passkeys/register/options', { invitation });
    if (options.status !== 200) {
      expect(await options.json()).toMatchObject({ error: { code: 'invitation_invalid' } });
      return;
    }
    const puppet = await enrol(invitation);
    await inbox.manager.decide(request.id, signAs(request, 'alice'));
    await approveWithPasskey(puppet, request.id);
    const proof = await inbox.manager.prove(
      await inbox.manager.require(request.id),
      proposal,
      decision,
    );
    expect(proof.proven).toBe(false);
  });

  it('control: alice and her invited puppet, with the invitation as the inbox wrote it, do not make a dual approval (the sponsor rule)', async () => {
    const db = context.db();
    inbox = await startTestInbox(db);
    const proposal = transferProposal('th-sponsored');
    const decision = escalate('dual_approval');
    const request = await inbox.manager.request(proposal, decision);
    const admin = await inbox.login('alice');
    const invited = await post(
      '/api/invitations',
      { approver: 'alice-ops' },
      undefined,
      admin.token,
    );
    const { link } = (await invited.json()) as { link: string };
    const puppet = await enrol(link.slice(link.lastIndexOf('/') + 1));
    await inbox.manager.decide(request.id, signAs(request, 'alice'));
    await approveWithPasskey(puppet, request.id);
    const proof = await inbox.manager.prove(
      await inbox.manager.require(request.id),
      proposal,
      decision,
    );
    expect(proof.proven).toBe(false);
  });
});
