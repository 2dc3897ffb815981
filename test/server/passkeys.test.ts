import { afterEach, expect, it } from 'vitest';
import {
  Ed25519Signer,
  Ed25519Verifier,
  GENESIS_HASH,
  generateKeyPair,
  hashTraceEvent,
  sealEvidence,
  verifyEvidence,
} from '../../src/audit/index.js';
import {
  loadDirectorySeal,
  parseApprovers,
  serializeApprovers,
  webauthnKeyId,
} from '../../src/identity/index.js';
import { InvitationStore } from '../../src/server/invitations.js';
import { describeEachDatabase } from '../support/databases.js';
import { startTestInbox, type TestInbox } from '../support/inbox.js';
import { escalate, transferProposal } from '../support/proposals.js';
import { SoftAuthenticator } from '../support/soft-authenticator.js';

interface Browser {
  authenticator: SoftAuthenticator;
  cookie: string;
  csrfToken: string;
}

describeEachDatabase('passkeys in the approvals service', (context) => {
  let inbox: TestInbox | undefined;
  afterEach(async () => {
    await inbox?.close();
    inbox = undefined;
  });

  async function errorCode(response: Response): Promise<string> {
    const body = (await response.json()) as { error?: { code: string } };
    return body.error?.code ?? `no error (status ${response.status})`;
  }

  const post = (
    path: string,
    body: unknown,
    browser?: Browser,
    headers: Record<string, string> = {},
  ) =>
    inbox!.call(path, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: browser
        ? {
            cookie: browser.cookie,
            'x-csrf-token': browser.csrfToken,
            origin: inbox!.server.origin,
            ...headers,
          }
        : headers,
    });

  /** alice (admin, signed in with her Ed25519 key) invites `name`; returns the invitation token. */
  async function invite(name: string): Promise<string> {
    const admin = await inbox!.login('alice');
    const response = await inbox!.call('/api/invitations', {
      method: 'POST',
      token: admin.token,
      body: JSON.stringify({ approver: name, displayName: name.toUpperCase() }),
    });
    expect(response.status).toBe(200);
    const { link } = (await response.json()) as { link: string };
    expect(link.startsWith(`${inbox!.server.origin}/#/enrol/`)).toBe(true);
    return link.slice(link.lastIndexOf('/') + 1);
  }

  /** What `veridex approvers invite` does: the operator's invitation (no sponsor). */
  async function operatorInvite(name: string): Promise<string> {
    await inbox!.directory.add({ id: name, displayName: name.toUpperCase() });
    const invitation = await new InvitationStore(context.db(), {
      seal: loadDirectorySeal(),
    }).create({
      approverId: name,
      createdBy: { via: 'operator', operator: 'ops' },
    });
    return invitation.token;
  }

  async function enrol(name: string, by: 'admin' | 'operator' = 'admin'): Promise<Browser> {
    const invitation = by === 'admin' ? await invite(name) : await operatorInvite(name);
    const authenticator = new SoftAuthenticator(inbox!.server.origin);
    const options = await (await post('/api/passkeys/register/options', { invitation })).json();
    const registered = await post('/api/passkeys/register', {
      invitation,
      response: authenticator.register(options),
    });
    expect(registered.status, await registered.clone().text()).toBe(200);
    const body = (await registered.json()) as { csrfToken: string };
    return {
      authenticator,
      cookie: registered.headers.get('set-cookie')!.split(';')[0]!,
      csrfToken: body.csrfToken,
    };
  }

  async function passkeyDecision(
    browser: Browser,
    approvalId: string,
    decision: 'approve' | 'reject' = 'approve',
    reason = 'invoice checked',
  ) {
    const prepared = await post(
      `/api/approvals/${approvalId}/passkey-challenge`,
      { decision, reason },
      browser,
    );
    expect(prepared.status, await prepared.clone().text()).toBe(200);
    const { statement, options } = (await prepared.json()) as {
      statement: { approvalId: string; nonce: string };
      options: { challenge: string; allowCredentials: Array<{ id: string }> };
    };
    const assertion = browser.authenticator.assert(options);
    return {
      statement,
      keyId: webauthnKeyId(assertion.id),
      signature: assertion.response.signature,
      webauthn: {
        authenticatorData: assertion.response.authenticatorData,
        clientDataJSON: assertion.response.clientDataJSON,
      },
      reason,
    };
  }

  it('enrols an invited approver: the passkey joins the directory, the link works once', async () => {
    inbox = await startTestInbox(context.db());
    const dave = await enrol('dave');
    const approver = await inbox.directory.get('dave');
    expect(approver?.displayName).toBe('DAVE');
    const key = approver!.keys[0]!;
    expect(key).toMatchObject({ type: 'webauthn', rpId: 'localhost', algorithm: -7 });
    expect(key.keyId).toBe(webauthnKeyId(dave.authenticator.credentials[0]!.id));
    const session = (await (
      await inbox.call('/api/session', { headers: { cookie: dave.cookie } })
    ).json()) as { approver: { id: string }; method: string };
    expect(session).toMatchObject({ approver: { id: 'dave' }, method: 'passkey' });

    // The directory export carries the passkey, and an auditor can read it back.
    const exported = parseApprovers(serializeApprovers(await inbox.directory.list()));
    expect(exported.find((entry) => entry.id === 'dave')?.keys[0]).toMatchObject({
      type: 'webauthn',
    });

    const invitation = await invite('erin');
    const erin = new SoftAuthenticator(inbox.server.origin);
    const options = await (await post('/api/passkeys/register/options', { invitation })).json();
    const first = await post('/api/passkeys/register', {
      invitation,
      response: erin.register(options),
    });
    expect(first.status).toBe(200);
    const again = await post('/api/passkeys/register/options', { invitation });
    expect(again.status).toBe(410);
    expect(await errorCode(again)).toBe('invitation_invalid');

    const bob = await inbox.login('bob');
    const notAdmin = await inbox.call('/api/invitations', {
      method: 'POST',
      token: bob.token,
      body: JSON.stringify({ approver: 'frank' }),
    });
    expect(notAdmin.status).toBe(403);
    expect(await errorCode(notAdmin)).toBe('admin_required');
    const forged = await post('/api/passkeys/register/options', { invitation: 'x'.repeat(43) });
    expect(await errorCode(forged)).toBe('invitation_invalid');
  });

  it('refuses a registration made for another origin or without user verification', async () => {
    inbox = await startTestInbox(context.db());
    for (const tamper of ['origin', 'uv'] as const) {
      const invitation = await invite(`grace-${tamper}`);
      const authenticator =
        tamper === 'origin'
          ? new SoftAuthenticator('https://evil.example', 'localhost')
          : new SoftAuthenticator(inbox.server.origin);
      if (tamper === 'uv') authenticator.flags = 0x01;
      const options = await (await post('/api/passkeys/register/options', { invitation })).json();
      const refused = await post('/api/passkeys/register', {
        invitation,
        response: authenticator.register(options),
      });
      expect(refused.status, tamper).toBe(401);
      expect(await errorCode(refused)).toBe('passkey_invalid');
      expect((await inbox.directory.get(`grace-${tamper}`))?.keys).toEqual([]);
    }
  });

  it('signs in with a passkey once per challenge; unknown, foreign and unverified assertions are refused', async () => {
    inbox = await startTestInbox(context.db());
    const dave = await enrol('dave');
    const options = await (await post('/api/passkeys/login/options', {})).json();
    const assertion = dave.authenticator.assert(options);
    const login = await post('/api/passkeys/login', { response: assertion });
    expect(login.status).toBe(200);
    expect(login.headers.get('set-cookie')).toMatch(
      /HttpOnly.*Secure.*SameSite=Strict|SameSite=Strict/,
    );
    const replay = await post('/api/passkeys/login', { response: assertion });
    expect(replay.status).toBe(409);
    expect(await errorCode(replay)).toBe('challenge_invalid');

    const stranger = new SoftAuthenticator(inbox.server.origin);
    stranger.register({ challenge: 'x', rp: { id: 'localhost' }, user: { id: 'eA' } });
    const cases = [
      [
        'unknown credential',
        stranger.assert(await (await post('/api/passkeys/login/options', {})).json()),
      ],
      [
        'another origin',
        dave.authenticator.assert(await (await post('/api/passkeys/login/options', {})).json(), {
          origin: 'https://evil.example',
        }),
      ],
      [
        'another relying party',
        dave.authenticator.assert(await (await post('/api/passkeys/login/options', {})).json(), {
          rpId: 'evil.example',
        }),
      ],
    ] as const;
    for (const [what, response] of cases) {
      const refused = await post('/api/passkeys/login', { response });
      expect(refused.status, what).toBe(401);
      expect(await errorCode(refused)).toBe('passkey_invalid');
    }
    dave.authenticator.flags = 0x01;
    const unverified = await post('/api/passkeys/login', {
      response: dave.authenticator.assert(
        await (await post('/api/passkeys/login/options', {})).json(),
      ),
    });
    expect(await errorCode(unverified)).toBe('passkey_invalid');
  });

  it('counts a passkey decision once, refuses its replay, and records statement and assertion', async () => {
    inbox = await startTestInbox(context.db());
    const request = await inbox.manager.request(
      transferProposal('th-pk'),
      escalate('dual_approval'),
    );
    const dave = await enrol('dave');
    const signed = await passkeyDecision(dave, request.id);
    const first = await post(`/api/approvals/${request.id}/decisions`, signed, dave);
    expect(first.status, await first.clone().text()).toBe(200);
    expect(await first.json()).toMatchObject({
      quorum: { approvals: 1 },
      decisions: [{ method: 'webauthn' }],
    });
    const replay = await post(`/api/approvals/${request.id}/decisions`, signed, dave);
    expect(replay.status).toBe(409);
    expect(await errorCode(replay)).toBe('decision_nonce_reused');
    const stored = await inbox.manager.require(request.id);
    expect(stored.decisions).toHaveLength(1);
    expect(stored.decisions[0]!.signed?.webauthn).toMatchObject({ rpId: 'localhost' });
    const decided = (await inbox.audit.events('th-pk')).find(
      (event) => event.type === 'approval_decided',
    );
    expect(decided?.payload.signed).toMatchObject({
      keyId: signed.keyId,
      signature: signed.signature,
    });
  });

  it('refuses an assertion for another approval, or for another statement', async () => {
    inbox = await startTestInbox(context.db());
    const a = await inbox.manager.request(
      transferProposal('th-wrong', 'call_a'),
      escalate('dual_approval'),
    );
    const b = await inbox.manager.request(
      transferProposal('th-wrong', 'call_b'),
      escalate('dual_approval'),
    );
    const dave = await enrol('dave');

    // Signed for A, posted to B.
    const forA = await passkeyDecision(dave, a.id);
    const misplaced = await post(`/api/approvals/${b.id}/decisions`, forA, dave);
    expect(misplaced.status).toBe(409);
    expect(await errorCode(misplaced)).toBe('decision_mismatch');

    // A's assertion under a statement rewritten to name B (same nonce, B's proposal hash).
    const rewritten = {
      ...forA,
      statement: { ...forA.statement, approvalId: b.id, proposalHash: b.proposalHash },
    };
    const swapped = await post(`/api/approvals/${b.id}/decisions`, rewritten, dave);
    expect(swapped.status).toBe(409);
    expect(await errorCode(swapped)).toBe('challenge_invalid');

    // An approve assertion under a reject statement.
    const approve = await passkeyDecision(dave, b.id, 'approve');
    const flipped = { ...approve, statement: { ...approve.statement, decision: 'reject' } };
    const refused = await post(`/api/approvals/${b.id}/decisions`, flipped, dave);
    expect(await errorCode(refused)).toBe('challenge_invalid');

    // Even with the service's challenge check out of the way (an agent resuming with the
    // decision from another process), the signature itself does not cover a changed statement.
    const direct = await inbox.manager.decide(b.id, flipped as never).then(
      () => 'accepted',
      (error: { code?: string }) => error.code,
    );
    expect(direct).toBe('decision_signature_invalid');
    expect((await inbox.manager.require(a.id)).decisions).toEqual([]);
    expect((await inbox.manager.require(b.id)).decisions).toEqual([]);
  });

  it('two passkey approvals verify offline in the evidence, and tampering is caught', async () => {
    inbox = await startTestInbox(context.db());
    const request = await inbox.manager.request(
      transferProposal('th-ev'),
      escalate('dual_approval'),
    );
    // Two people: dave invited by admin alice, erin by an operator (`veridex approvers invite`).
    // Two enrollees of one admin never make a dual approval (the admin may be both).
    for (const name of ['dave', 'erin']) {
      const browser = await enrol(name, name === 'erin' ? 'operator' : 'admin');
      const response = await post(
        `/api/approvals/${request.id}/decisions`,
        await passkeyDecision(browser, request.id),
        browser,
      );
      expect(response.status).toBe(200);
    }
    expect((await inbox.manager.require(request.id)).status).toBe('approved');
    const signer = new Ed25519Signer(generateKeyPair().privateKey);
    const bundle = sealEvidence({ threadId: 'th-ev', events: await inbox.audit.events('th-ev') }, [
      signer,
    ]);
    const approvers = parseApprovers(serializeApprovers(await inbox.directory.list()));
    const keys = [new Ed25519Verifier(signer.publicKey)];
    const verification = verifyEvidence(bundle, { keys, approvers });
    expect(verification.valid, verification.reasons.join('; ')).toBe(true);
    const approvals = verification.decisions.filter((check) => check.decision === 'approve');
    expect(
      approvals.map((check) => [check.approver, check.method, check.status, check.keyTrusted]),
    ).toEqual([
      ['dave', 'webauthn', 'valid', true],
      ['erin', 'webauthn', 'valid', true],
    ]);
    expect(approvals[0]!.origin).toBe(inbox.server.origin);

    // An insider rewrites dave's statement (a later time) and re-seals the chain with a key the
    // auditor trusts: the passkey signature no longer covers the statement.
    const events = structuredClone(await inbox.audit.events('th-ev'));
    let previous = GENESIS_HASH;
    for (const event of events) {
      if (event.type === 'approval_decided' && event.payload.approver === 'dave') {
        const signed = event.payload.signed as { statement: { decidedAt: string } };
        signed.statement.decidedAt = new Date(
          Date.parse(signed.statement.decidedAt) + 1000,
        ).toISOString();
      }
      event.previousEventHash = previous;
      event.hash = hashTraceEvent(event);
      previous = event.hash;
    }
    const forged = verifyEvidence(sealEvidence({ threadId: 'th-ev', events }, [signer]), {
      keys,
      approvers,
    });
    expect(forged.valid).toBe(false);
    expect(forged.decisions.find((check) => check.approver === 'dave')?.problem).toMatch(
      /another challenge/,
    );

    // A directory where erin's passkey is someone else's: her decision no longer counts.
    const other = approvers.map((approver) =>
      approver.id === 'erin' ? { ...approver, keys: [] } : approver,
    );
    const untrusted = verifyEvidence(bundle, { keys, approvers: other });
    expect(untrusted.valid).toBe(false);
    expect(untrusted.decisions.find((check) => check.approver === 'erin')?.status).toBe('invalid');

    // The origin is checked offline against the auditor's approvers file: erin's passkey bound
    // to another origin, or to none (enrolled before origins were recorded), decides nothing.
    const withOrigins = (origins: string[] | undefined) =>
      approvers.map((approver) =>
        approver.id === 'erin'
          ? {
              ...approver,
              keys: approver.keys.map(({ ...key }) => {
                if (key.type !== 'webauthn') return key;
                delete key.origins;
                return origins ? { ...key, origins } : key;
              }),
            }
          : approver,
      );
    const erinKey = approvers.find((approver) => approver.id === 'erin')?.keys[0] as
      | { origins?: string[] }
      | undefined;
    expect(erinKey?.origins).toEqual([inbox.server.origin]);
    const elsewhere = verifyEvidence(bundle, {
      keys,
      approvers: withOrigins(['http://localhost:3000']),
    });
    expect(elsewhere.valid).toBe(false);
    expect(elsewhere.decisions.find((check) => check.approver === 'erin')?.problem).toMatch(
      /made on .* not on http:\/\/localhost:3000/,
    );
    const legacy = verifyEvidence(bundle, { keys, approvers: withOrigins(undefined) });
    expect(legacy.valid).toBe(false);
    expect(legacy.decisions.find((check) => check.approver === 'erin')?.problem).toMatch(
      /records no origin/,
    );
    // Without an approvers file, the origins the bundle recorded with each decision are used.
    const bundleKeys = verifyEvidence(bundle, { keys, trustBundleKeys: true });
    expect(bundleKeys.valid, bundleKeys.reasons.join('; ')).toBe(true);
  });
});
