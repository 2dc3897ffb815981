import { afterEach, expect, it } from 'vitest';
import { ApprovalManager, PostgresApprovalStore } from '../../src/approvals/index.js';
import { contentHash } from '../../src/audit/index.js';
import { describeEachDatabase } from '../support/databases.js';
import { startTestInbox, type TestInbox } from '../support/inbox.js';
import { escalate, transferProposal } from '../support/proposals.js';

/**
 * Adversary: an insider with psql write access to veridex_approvals and the audit table (no key
 * of any kind), at a deployment whose agent would open approval requests with an
 * ApprovalManager that has no audit log (`new ApprovalManager({ db })`), while the inbox has one.
 *
 * Guarantee under attack (README "What approvers see is what they sign"): the inbox shows a
 * request's arguments only as bound to `proposal_hash` — exactly, or, for an envelope scrubbed
 * of a secret at rest, through the `shownProposalHash` digest of the request's FIRST
 * hash-chained `approval_requested` event. A request opened without an audit log would have no
 * such event: the insider rewrites the envelope and appends the "first" event (a valid extension
 * of the chain) recording its digest, and the inbox would show the rewritten arguments as
 * `redacted`. Fixed at the opening side: a manager that keeps requests in a database needs the
 * audit log (`config_invalid` otherwise), so every stored request has its first event written
 * by the manager that opened it, and the insider's appended one is a second.
 */
describeEachDatabase('an insider who writes the first audit record of a request', (context) => {
  let inbox: TestInbox | undefined;
  afterEach(async () => {
    await inbox?.close();
    inbox = undefined;
  });

  it('a manager that would open requests in a database without their audit log is refused', () => {
    const db = context.db();
    for (const options of [{ db }, { store: new PostgresApprovalStore(db) }]) {
      expect(() => new ApprovalManager(options)).toThrow(
        expect.objectContaining({ code: 'config_invalid' }),
      );
    }
  });

  it('a request rewritten to $50 and "recorded" by an appended event is not shown as bound', async () => {
    const db = context.db();
    inbox = await startTestInbox(db);
    const agentSide = new ApprovalManager({ db, audit: inbox.audit, approvers: inbox.directory });
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
