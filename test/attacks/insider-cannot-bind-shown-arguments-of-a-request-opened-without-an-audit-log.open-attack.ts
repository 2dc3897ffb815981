import { afterEach, expect, it } from 'vitest';
import { ApprovalManager } from '../../src/approvals/index.js';
import { contentHash } from '../../src/audit/index.js';
import { describeEachDatabase } from '../support/databases.js';
import { startTestInbox, type TestInbox } from '../support/inbox.js';
import { escalate, transferProposal } from '../support/proposals.js';

/**
 * Adversary: an insider with psql write access to veridex_approvals and the audit table (no key
 * of any kind), at a deployment whose agent opens approval requests with an ApprovalManager that
 * has no audit log (`new ApprovalManager({ db })`), while the inbox has one.
 *
 * Guarantee under attack (README "What approvers see is what they sign"): the inbox shows a
 * request's arguments only as bound to `proposal_hash` — exactly, or, for an envelope scrubbed
 * of a secret at rest, through the `shownProposalHash` digest of the request's FIRST
 * hash-chained `approval_requested` event. A request opened without an audit log has no such
 * event: the insider rewrites the envelope and appends the "first" event (a valid extension of
 * the chain) recording its digest, and the inbox shows the rewritten arguments as `redacted`.
 * (Found while fixing insider-cannot-show-approvers-other-arguments-than-they-sign; left open.)
 * The test asserts the SECURE outcome (fails today).
 */
describeEachDatabase('an insider who writes the first audit record of a request', (context) => {
  let inbox: TestInbox | undefined;
  afterEach(async () => {
    await inbox?.close();
    inbox = undefined;
  });

  it('a request opened without an audit log, rewritten to $50 and "recorded" by an appended event, is not shown as bound', async () => {
    const db = context.db();
    inbox = await startTestInbox(db);
    const agentSide = new ApprovalManager({ db, approvers: inbox.directory });
    const request = await agentSide.request(
      transferProposal('th-no-audit'),
      escalate('human_required'),
    );
    const forged = {
      ...request.proposal,
      arguments: { to: 'acme-suppliers', amount: '50.00', currency: 'USD', memo: 'INV-1234' },
    };
    await db.query(`UPDATE veridex_approvals SET proposal = $2 WHERE id = $1`, [
      request.id,
      JSON.stringify(forged),
    ]);
    await inbox.audit.append({
      threadId: 'th-no-audit',
      type: 'approval_requested',
      payload: {
        approvalId: request.id,
        proposalHash: request.proposalHash,
        shownProposalHash: contentHash(forged),
      },
    });
    const shown = await inbox.manager.shownProposal(await inbox.manager.require(request.id));
    expect(shown.binding).toBe('none');
  });
});
