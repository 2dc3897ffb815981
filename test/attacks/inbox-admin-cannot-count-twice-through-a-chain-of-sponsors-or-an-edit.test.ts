import { Command } from '@langchain/langgraph';
import * as ed from '@noble/ed25519';
import { afterEach, expect, it } from 'vitest';
import { webauthnKeyId } from '../../src/identity/index.js';
import type { ApprovalsInterrupt } from '../../src/nodes/index.js';
import { signAs, testKey } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';
import { startTestInbox, type TestInbox } from '../support/inbox.js';
import { insiderGraph, suspendedOn } from '../support/insider-graph.js';
import { escalate, transferProposal } from '../support/proposals.js';
import { SoftAuthenticator } from '../support/soft-authenticator.js';

/**
 * Adversary: alice, an administrator of the inbox (role `admin`) and herself an approver. She
 * holds her own credentials and whatever she enrols through invitations she creates; no
 * database access, no directory key. Guarantee under attack (README "Security", administrator
 * row; `WebAuthnApproverKey.sponsor`): a key enrolled unproven on an admin's invitation carries
 * her as its sponsor and "never counts in one quorum with her, nor on a call the sponsor
 * proposed"; "whoever edits the arguments … cannot approve" the edited proposal. A dual approval
 * needs two people. Each test asserts the SECURE outcome (fails today).
 */
interface Browser {
  cookie: string;
  csrfToken: string;
  device: SoftAuthenticator;
}

describeEachDatabase('an inbox admin who chains sponsors', (context) => {
  let inbox: TestInbox | undefined;
  afterEach(async () => {
    await inbox?.close();
    inbox = undefined;
  });

  const post = (path: string, body: unknown, browser?: Browser, token?: string) =>
    inbox!.call(path, {
      method: 'POST',
      body: JSON.stringify(body),
      ...(token ? { token } : {}),
      headers: browser
        ? {
            cookie: browser.cookie,
            'x-csrf-token': browser.csrfToken,
            origin: inbox!.server.origin,
          }
        : {},
    });

  async function enrol(link: string, device: SoftAuthenticator): Promise<Browser> {
    const invitation = link.slice(link.lastIndexOf('/') + 1);
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

  it('enrols her own passkey as erin, a second admin the operator added without a key, and as erin invites "erin-ops" and enrols it too: alice and erin-ops do not make a dual approval', async () => {
    inbox = await startTestInbox(context.db());
    // The operator adds a second admin and leaves her enrolment to the inbox:
    // `veridex approvers add erin --role admin`, then alice sends her an invitation.
    await inbox.directory.add({ id: 'erin', displayName: 'Erin', roles: ['admin'] });
    const proposal = transferProposal('th-sponsor-chain');
    const decision = escalate('dual_approval');
    const request = await inbox.manager.request(proposal, decision);
    const admin = await inbox.login('alice');
    const forErin = await post('/api/invitations', { approver: 'erin' }, undefined, admin.token);
    expect(forErin.status).toBe(200);
    // alice opens erin's link herself: erin's passkey is alice's device (sponsor: alice).
    const alicesDevice = new SoftAuthenticator(inbox.server.origin);
    const asErin = await enrol(((await forErin.json()) as { link: string }).link, alicesDevice);
    // Signed in as erin (an admin), she invites a brand-new approver and enrols it as well.
    const forPuppet = await post('/api/invitations', { approver: 'erin-ops' }, asErin);
    expect(forPuppet.status, await forPuppet.clone().text()).toBe(200);
    const puppetDevice = new SoftAuthenticator(inbox.server.origin);
    const puppet = await enrol(((await forPuppet.json()) as { link: string }).link, puppetDevice);
    // Its sponsor is erin, not alice: the directory's key for erin-ops.
    const puppetKey = (await inbox.directory.get('erin-ops'))!.keys[0]!;
    expect(puppetKey.sponsor).toBe('erin');
    // Vote one: alice, with her own Ed25519 key. Vote two: erin-ops, alice's passkey.
    await inbox.manager.decide(request.id, signAs(request, 'alice'));
    const prepared = await post(
      `/api/approvals/${request.id}/passkey-challenge`,
      { decision: 'approve' },
      puppet,
    );
    const { statement, options } = (await prepared.json()) as {
      statement: unknown;
      options: unknown;
    };
    const assertion = puppetDevice.assert(options);
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
    const proof = await inbox.manager.prove(
      await inbox.manager.require(request.id),
      proposal,
      decision,
    );
    expect(proof.proven).toBe(false);
  });
});

describeEachDatabase('an inbox admin who edits through her puppet', (context) => {
  const config = (threadId: string) => ({ configurable: { thread_id: threadId } });
  const pendingOf = (result: unknown) =>
    (result as { __interrupt__?: Array<{ value: ApprovalsInterrupt }> }).__interrupt__?.[0]?.value;

  it('her invited "alice-ops" edits the payee to her own account, then alice approves the edited transfer beside bob: it does not run on alice\'s approval', async () => {
    const db = context.db();
    const { graph, ledger, approvals } = await insiderGraph(db, { route: 'dual_approval' });
    // What the inbox stores after alice's invitation of "alice-ops" is opened unproven (see
    // passkeys.ts register(): the key's sponsor is the inviting admin). An Ed25519 key stands in
    // for the passkey so the graph's resume payloads can carry the decisions.
    await approvals.directory.add({ id: 'alice-ops', displayName: 'Treasury Ops' });
    await approvals.directory.addKey('alice-ops', ed.getPublicKey(testKey('alice-ops')), {
      sponsor: 'alice',
    });
    const pending = await suspendedOn(graph, 't-puppet-edit');
    const edited = await graph.invoke(
      new Command({
        resume: signAs(pending, 'alice-ops', 'edit', {
          editedArgs: { to: 'alice-holdings', amount: '50000.00', currency: 'USD' },
        }),
      }),
      config('t-puppet-edit'),
    );
    const revised = pendingOf(edited)?.approvals[0];
    expect(revised?.arguments).toMatchObject({ to: 'alice-holdings' });
    // The editor proposed the new version: "alice-ops" cannot approve it — nor may alice, for
    // whom the key speaks.
    await graph.invoke(new Command({ resume: signAs(revised!, 'alice') }), config('t-puppet-edit'));
    await graph.invoke(new Command({ resume: signAs(revised!, 'bob') }), config('t-puppet-edit'));
    // bob is the one person besides alice: one approval of the two a dual approval needs.
    expect(ledger.transfers).toHaveLength(0);
  });

  it('control: alice-ops edits, and alice-ops cannot approve the edited transfer herself', async () => {
    const db = context.db();
    const { graph, ledger, approvals } = await insiderGraph(db, { route: 'human_required' });
    await approvals.directory.add({ id: 'alice-ops' });
    await approvals.directory.addKey('alice-ops', ed.getPublicKey(testKey('alice-ops')), {
      sponsor: 'alice',
    });
    const pending = await suspendedOn(graph, 't-puppet-self');
    const edited = await graph.invoke(
      new Command({
        resume: signAs(pending, 'alice-ops', 'edit', {
          editedArgs: { to: 'alice-holdings', amount: '50000.00', currency: 'USD' },
        }),
      }),
      config('t-puppet-self'),
    );
    const revised = pendingOf(edited)!.approvals[0]!;
    await graph.invoke(
      new Command({ resume: signAs(revised, 'alice-ops') }),
      config('t-puppet-self'),
    );
    expect(ledger.transfers).toHaveLength(0);
  });
});
