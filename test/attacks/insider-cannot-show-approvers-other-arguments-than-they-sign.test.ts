import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { contentHash } from '../../src/audit/index.js';
import { runCli } from '../../src/cli/index.js';
import { createDatabase, migrate } from '../../src/db/index.js';
import { signDecision } from '../../src/identity/index.js';
import { testKey } from '../support/approvers.js';
import { describeEachDatabase, postgresUrl, uniqueSchema } from '../support/databases.js';
import { startTestInbox, type TestInbox } from '../support/inbox.js';
import { approvalsIn, escalate, transferProposal } from '../support/proposals.js';

/**
 * Adversary: an insider with psql write access to veridex_approvals (no key of any kind).
 * Guarantee under attack (THREAT-MODEL adversary 3 and rules of thumb: an approver must never
 * "approve something other than what was shown"; README "Approvals inbox"): what the inbox shows
 * an approver is the proposal their signature approves.
 *
 * A signature binds the approval id and the proposal HASH; an approver reads the ARGUMENTS the
 * inbox shows, which come from the row's `proposal` (and `summary`) jsonb — never checked
 * against `proposal_hash`, although the envelope is exactly what the hash is computed over. The
 * insider rewrites the $50,000 transfer's shown amount to $50; bob approves what he sees; his
 * signature over the real hash counted, and the $50,000 call was proven. Now the inbox and the
 * CLI show a proposal only through `ApprovalManager.shownProposal`, which recomputes its hash
 * from the stored envelope (shown-proposal.ts), and refuse to show or decide one that does not
 * match (`proposal_tampered`, a security_event). Each test asserts the SECURE outcome.
 */
const SECRET = 'pk_live_9Tq4Wz7LmR2xV8nB3kY6cD1f';

describeEachDatabase('an insider who edits what the inbox shows', (context) => {
  let inbox: TestInbox | undefined;
  afterEach(async () => {
    await inbox?.close();
    inbox = undefined;
  });

  it('rewrites the shown amount of a $50,000 transfer to $50: bob’s approval of what he was shown does not prove the $50,000 call', async () => {
    const db = context.db();
    inbox = await startTestInbox(db);
    const proposal = transferProposal('th-shown');
    const decision = escalate('human_required');
    const request = await inbox.manager.request(proposal, decision, {
      summary: { toolName: 'transfer', arguments: proposal.arguments },
    });
    const shownArgs = { ...proposal.arguments, amount: '50.00' };
    await db.query(
      `UPDATE veridex_approvals
         SET proposal = jsonb_set(proposal::jsonb, '{arguments}', $2::jsonb),
             summary = jsonb_set(summary::jsonb, '{arguments}', $2::jsonb)
       WHERE id = $1`,
      [request.id, JSON.stringify(shownArgs)],
    );
    const bob = await inbox.login('bob');
    const response = await inbox.call(`/api/approvals/${request.id}`, { token: bob.token });
    if (response.status === 200) {
      const view = (await response.json()) as {
        id: string;
        proposalHash: string;
        proposal: { arguments: Record<string, unknown> };
        highlights: { amount?: string };
      };
      // bob approves the small payment he is shown, signing the request as the inbox gives it.
      if (view.highlights.amount === '50.00') {
        const signed = signDecision(
          { request: view, decision: 'approve', approver: 'bob', reason: 'small, fine' },
          testKey('bob'),
        );
        await inbox.call(`/api/approvals/${request.id}/decisions`, {
          method: 'POST',
          token: bob.token,
          body: JSON.stringify(signed),
        });
      }
    }
    const proof = await inbox.manager.prove(
      await inbox.manager.require(request.id),
      proposal,
      decision,
    );
    expect(proof.proven).toBe(false);
  });

  it('the inbox lists the edited request with nothing of its proposal, never as "mine", and refuses its detail and any decision (proposal_tampered, a security_event)', async () => {
    const db = context.db();
    inbox = await startTestInbox(db);
    const proposal = transferProposal('th-flagged');
    const request = await inbox.manager.request(proposal, escalate('human_required'));
    await db.query(
      `UPDATE veridex_approvals
         SET proposal = jsonb_set(proposal::jsonb, '{arguments,amount}', '"50.00"'::jsonb)
       WHERE id = $1`,
      [request.id],
    );
    const bob = await inbox.login('bob');
    const all = (await (await inbox.call('/api/approvals', { token: bob.token })).json()) as {
      items: Array<Record<string, unknown>>;
    };
    const listed = all.items.find((item) => item.id === request.id)!;
    expect(listed).toMatchObject({
      proposalBinding: 'none',
      proposal: {},
      summary: {},
      highlights: {},
    });
    expect(JSON.stringify(listed)).not.toContain('50.00');
    const mine = (await (
      await inbox.call('/api/approvals?scope=mine', { token: bob.token })
    ).json()) as { items: Array<{ id: string }> };
    expect(mine.items.map((item) => item.id)).not.toContain(request.id);
    const detail = await inbox.call(`/api/approvals/${request.id}`, { token: bob.token });
    expect(detail.status).toBe(409);
    expect(((await detail.json()) as { error: { code: string } }).error.code).toBe(
      'proposal_tampered',
    );
    // bob signs the request as the row gives it (its real hash): the inbox takes no decision on it.
    const signed = signDecision({ request, decision: 'approve', approver: 'bob' }, testKey('bob'));
    const posted = await inbox.call(`/api/approvals/${request.id}/decisions`, {
      method: 'POST',
      token: bob.token,
      body: JSON.stringify(signed),
    });
    expect(posted.status).toBe(409);
    expect(((await posted.json()) as { error: { code: string } }).error.code).toBe(
      'proposal_tampered',
    );
    expect((await inbox.manager.require(request.id)).decisions).toHaveLength(0);
    const events = await inbox.audit.events('th-flagged');
    expect(
      events.some(
        (event) =>
          event.type === 'security_event' &&
          event.payload.kind === 'proposal_tampered' &&
          event.payload.approvalId === request.id,
      ),
    ).toBe(true);
  });

  it('an edited summary shows nothing: the view’s summary and highlights come from the hashed envelope', async () => {
    const db = context.db();
    inbox = await startTestInbox(db);
    const proposal = transferProposal('th-summary');
    const request = await inbox.manager.request(proposal, escalate('human_required'), {
      summary: { toolName: 'transfer', safetyClass: 'financial', arguments: proposal.arguments },
    });
    await db.query(
      `UPDATE veridex_approvals
         SET summary = '{"toolName":"refund","safetyClass":"read","arguments":{"amount":"50.00"}}'
       WHERE id = $1`,
      [request.id],
    );
    const bob = await inbox.login('bob');
    const view = (await (
      await inbox.call(`/api/approvals/${request.id}`, { token: bob.token })
    ).json()) as Record<string, unknown>;
    expect(view).toMatchObject({
      proposalBinding: 'hash',
      toolName: 'transfer',
      highlights: { amount: '50000.00' },
      summary: { toolName: 'transfer', arguments: { amount: '50000.00' } },
    });
    expect(JSON.stringify(view)).not.toMatch(/50\.00"|refund|"read"/);
  });

  it('control: a proposal a secret was scrubbed from at rest is shown redacted, as the audit log recorded it, and decided', async () => {
    const db = context.db();
    inbox = await startTestInbox(db);
    inbox.audit.scrubber.register('PAYMENT_API_KEY', SECRET);
    const proposal = transferProposal('th-redacted', 'call_1', `memo ${SECRET}`);
    const decision = escalate('human_required');
    const request = await inbox.manager.request(proposal, decision);
    expect(JSON.stringify(request.proposal)).toContain('[REDACTED:PAYMENT_API_KEY]');
    const bob = await inbox.login('bob');
    const view = (await (
      await inbox.call(`/api/approvals/${request.id}`, { token: bob.token })
    ).json()) as { proposalBinding: string; highlights: { memo?: string }; mayDecide: boolean };
    expect(view).toMatchObject({ proposalBinding: 'redacted', mayDecide: true });
    expect(view.highlights.memo).toContain('[REDACTED:PAYMENT_API_KEY]');
    const signed = signDecision({ request, decision: 'approve', approver: 'bob' }, testKey('bob'));
    const posted = await inbox.call(`/api/approvals/${request.id}/decisions`, {
      method: 'POST',
      token: bob.token,
      body: JSON.stringify(signed),
    });
    expect(posted.status, await posted.clone().text()).toBe(200);
    expect(
      (await inbox.manager.prove(await inbox.manager.require(request.id), proposal, decision))
        .proven,
    ).toBe(true);
  });

  it('edits a redacted proposal, also appending an approval_requested event that records the edit: refused', async () => {
    const db = context.db();
    inbox = await startTestInbox(db);
    inbox.audit.scrubber.register('PAYMENT_API_KEY', SECRET);
    const request = await inbox.manager.request(
      transferProposal('th-redacted-edit', 'call_1', `memo ${SECRET}`),
      escalate('human_required'),
    );
    const shownArgs = { ...(request.proposal.arguments as object), amount: '50.00' };
    await db.query(
      `UPDATE veridex_approvals SET proposal = jsonb_set(proposal::jsonb, '{arguments}', $2::jsonb)
       WHERE id = $1`,
      [request.id, JSON.stringify(shownArgs)],
    );
    const edited = await inbox.manager.require(request.id);
    // A valid extension of the chain, claiming the edited form as the one recorded.
    await inbox.audit.append({
      threadId: 'th-redacted-edit',
      type: 'approval_requested',
      payload: {
        approvalId: request.id,
        proposalHash: request.proposalHash,
        shownProposalHash: contentHash({ ...request.proposal, arguments: shownArgs }),
      },
    });
    expect((await inbox.manager.shownProposal(edited)).binding).toBe('none');
    const bob = await inbox.login('bob');
    expect((await inbox.call(`/api/approvals/${request.id}`, { token: bob.token })).status).toBe(
      409,
    );
  });

  it('moves a redacted request to a fresh thread whose log it writes itself: refused (the approval id is not that thread’s)', async () => {
    const db = context.db();
    inbox = await startTestInbox(db);
    inbox.audit.scrubber.register('PAYMENT_API_KEY', SECRET);
    const request = await inbox.manager.request(
      transferProposal('th-moved', 'call_1', `memo ${SECRET}`),
      escalate('human_required'),
    );
    const forged = {
      ...request.proposal,
      threadId: 'th-fresh',
      arguments: { to: 'acme-suppliers', amount: '50.00', currency: 'USD', memo: '[REDACTED:X]' },
    };
    await db.query(
      `UPDATE veridex_approvals SET thread_id = 'th-fresh', proposal = $2 WHERE id = $1`,
      [request.id, JSON.stringify(forged)],
    );
    await inbox.audit.append({
      threadId: 'th-fresh',
      type: 'approval_requested',
      payload: {
        approvalId: request.id,
        proposalHash: request.proposalHash,
        shownProposalHash: contentHash(forged),
      },
    });
    const moved = await inbox.manager.require(request.id);
    expect(moved.threadId).toBe('th-fresh');
    expect((await inbox.manager.shownProposal(moved)).binding).toBe('none');
  });
});

describe.runIf(postgresUrl)('an insider who edits what `veridex approvals list` shows', () => {
  it('the CLI lists the edited request without its arguments and refuses to approve it (proposal_tampered)', async () => {
    const url = new URL(postgresUrl!);
    url.searchParams.set('schema', uniqueSchema());
    const db = await createDatabase({ url: url.toString() });
    const keyDir = mkdtempSync(join(tmpdir(), 'veridex-shown-'));
    const lines = { out: [] as string[], err: [] as string[] };
    const io = {
      out: (line = '') => lines.out.push(line),
      err: (line = '') => lines.err.push(line),
    };
    try {
      await migrate(db);
      const request = await approvalsIn(db).request(
        transferProposal('th-cli-shown'),
        escalate('human_required'),
      );
      await db.query(
        `UPDATE veridex_approvals
           SET proposal = jsonb_set(proposal::jsonb, '{arguments,amount}', '"50.00"'::jsonb)
         WHERE id = $1`,
        [request.id],
      );
      const dbArgs = ['--database-url', url.toString()];
      expect(await runCli(['approvals', 'list', ...dbArgs], io)).toBe(0);
      const listed = lines.out.join('\n');
      expect(listed).toContain(request.id);
      expect(listed).toContain('PROPOSAL NOT SHOWN (proposal_tampered)');
      expect(listed).not.toContain('50.00');
      expect(await runCli(['approvers', 'keygen', 'bob', '--out', keyDir], io)).toBe(0);
      expect(
        await runCli(
          ['approvals', 'approve', request.id, '--key', join(keyDir, 'bob.key'), ...dbArgs],
          io,
        ),
      ).toBe(1);
      expect(lines.err.join('\n')).toContain('proposal_tampered');
    } finally {
      rmSync(keyDir, { recursive: true, force: true });
      await db.query(`DROP SCHEMA IF EXISTS "${db.schema}" CASCADE`);
      await db.close();
    }
  });
});
