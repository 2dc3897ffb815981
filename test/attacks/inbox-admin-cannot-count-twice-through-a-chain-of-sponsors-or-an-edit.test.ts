import { Command } from '@langchain/langgraph';
import * as ed from '@noble/ed25519';
import { afterEach, expect, it } from 'vitest';
import type { ApprovalsInterrupt } from '../../src/nodes/index.js';
import { signAs, testKey } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';
import { postToInbox, startTestInbox, type TestInbox } from '../support/inbox.js';
import { insiderGraph, suspendedOn } from '../support/insider-graph.js';
import type { SoftAuthenticator } from '../support/soft-authenticator.js';

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
    postToInbox(inbox!, path, body, browser, token);

  it('cannot enrol her own passkey as erin, a second admin the operator added without a key, so she never holds an admin key to sponsor a puppet through', async () => {
    inbox = await startTestInbox(context.db());
    // The operator adds a second admin and leaves her enrolment to the inbox:
    // `veridex approvers add erin --role admin`, then alice sends her an invitation. Before the
    // inbox refused to enrol an approver an operator added, alice opened erin's link herself and,
    // signed in as erin (an admin), enrolled a puppet sponsored by erin: a chain of sponsors.
    await inbox.directory.add({ id: 'erin', displayName: 'Erin', roles: ['admin'] });
    const admin = await inbox.login('alice');
    const forErin = await post('/api/invitations', { approver: 'erin' }, undefined, admin.token);
    expect(forErin.status).toBe(403);
    expect(await forErin.json()).toMatchObject({ error: { code: 'invitation_not_allowed' } });
    expect((await inbox.directory.get('erin'))!.keys).toHaveLength(0);
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
