import { afterEach, expect, it } from 'vitest';
import { webauthnKeyId } from '../../src/identity/index.js';
import { describeEachDatabase } from '../support/databases.js';
import { startTestInbox, type TestInbox } from '../support/inbox.js';
import { escalate, transferProposal } from '../support/proposals.js';
import { SoftAuthenticator } from '../support/soft-authenticator.js';

/**
 * Adversary: alice, an inbox admin whom the operator has since revoked (she left, or was caught
 * abusing the inbox), and who kept the passkey she enrolled, through her own invitation, for a
 * brand-new approver "pat" — the case the README describes: "Whoever opens an invitation an
 * admin issued in the inbox may be that admin", which is why the key carries her as its sponsor.
 *
 * Guarantee under attack (README "Sessions end with what proved them", "One admin, one vote";
 * Security, administrator row; THREAT-MODEL adversary 7): revoking someone ends what their
 * credentials prove. A key enrolled unproven on alice's invitation is, by the library's own
 * reasoning, possibly alice's; nothing but her invitation vouches for it.
 *
 * Steps: alice invites "pat" and enrols her own soft authenticator as pat's passkey (sponsor
 * alice). `veridex approvers revoke alice`. Pat's session (opened by that passkey) still answers
 * 200, and pat's passkey approves a $50,000 human_required transfer that `prove` accepts: the
 * sponsor rule only stops pat counting beside alice, and alice revoked counts for nothing
 * anyway. The revoked admin keeps approving through the identity she minted.
 *
 * Severity: medium (needs an admin gone bad before her revocation; the operator sees the sponsor
 * in `veridex approvers list` but nothing stops the key by itself).
 *
 * Suggested fix (mechanism): treat a key as revoked when any sponsor up its chain is revoked
 * (in `isActiveKey` callers: `authenticateDecision`, `recordProblem`, `liveSession`,
 * `verifyKeyLogin`, the passkey checks; offline in `checkOne`), until an operator vouches for the
 * key without a sponsor (`veridex approvers seal`); or have `revoke` of an approver also revoke,
 * sealed, every key it sponsored.
 */
describeEachDatabase('an inbox admin revoked after minting an approver', (context) => {
  let inbox: TestInbox | undefined;
  afterEach(async () => {
    await inbox?.close();
    inbox = undefined;
  });

  it("pat's passkey, enrolled by alice on her own invitation, neither keeps its session nor approves once alice is revoked", async () => {
    inbox = await startTestInbox(context.db());
    const post = (
      path: string,
      body: unknown,
      headers: Record<string, string> = {},
      token?: string,
    ) =>
      inbox!.call(path, {
        method: 'POST',
        body: JSON.stringify(body),
        headers,
        ...(token ? { token } : {}),
      });
    const admin = await inbox.login('alice');
    const invited = await post('/api/invitations', { approver: 'pat' }, {}, admin.token);
    const link = ((await invited.json()) as { link: string }).link;
    const invitation = link.slice(link.lastIndexOf('/') + 1);
    const device = new SoftAuthenticator(inbox.server.origin);
    const options = await (await post('/api/passkeys/register/options', { invitation })).json();
    const registered = await post('/api/passkeys/register', {
      invitation,
      response: device.register(options),
    });
    expect(registered.status).toBe(200);
    const browser = {
      cookie: registered.headers.get('set-cookie')!.split(';')[0]!,
      'x-csrf-token': ((await registered.json()) as { csrfToken: string }).csrfToken,
      origin: inbox.server.origin,
    };
    expect((await inbox.directory.get('pat'))!.keys[0]!.sponsor).toBe('alice');

    // The operator revokes alice: `veridex approvers revoke alice`.
    await inbox.directory.revoke('alice');

    const session = await inbox.call('/api/session', { headers: { cookie: browser.cookie } });
    const proposal = transferProposal('th-revoked-sponsor');
    const decision = escalate('human_required');
    const request = await inbox.manager.request(proposal, decision);
    const prepared = await post(
      `/api/approvals/${request.id}/passkey-challenge`,
      { decision: 'approve' },
      browser,
    );
    let proven = false;
    if (prepared.status === 200) {
      const { statement, options: assertionOptions } = (await prepared.json()) as {
        statement: unknown;
        options: unknown;
      };
      const assertion = device.assert(assertionOptions);
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
      proven = (
        await inbox.manager.prove(await inbox.manager.require(request.id), proposal, decision)
      ).proven;
    }
    expect({ session: session.status, proven }).toEqual({ session: 401, proven: false });
  });
});
