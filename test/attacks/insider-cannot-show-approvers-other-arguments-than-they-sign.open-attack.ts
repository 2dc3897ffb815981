import { afterEach, expect, it } from 'vitest';
import { signDecision } from '../../src/identity/index.js';
import { testKey } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';
import { startTestInbox, type TestInbox } from '../support/inbox.js';
import { escalate, transferProposal } from '../support/proposals.js';

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
 * signature over the real hash counts, and the $50,000 call is proven. The test asserts the
 * SECURE outcome (fails today).
 */
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
});
