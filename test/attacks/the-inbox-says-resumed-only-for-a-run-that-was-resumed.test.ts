// Resumer pass, the inbox detail's `resumption` (src/server/approval-view.ts). It is read from
// the resumer's bookkeeping columns (`resumed_at`, `resume_outcome`) as they stand, and those are
// plain columns of `veridex_approvals`: an insider with psql who sets `resumed_at` on an approved
// payment's request makes the inbox say "approved — resumed at …" although the run never went
// on — and the same write stops every resumer from ever taking it (the claim skips rows with
// `resumed_at`), so the payment waits for good while approvers are told it went through. No
// `run_resumed` event was ever appended to the thread's hash-chained log. (Low: an insider's
// denial of service dressed as success; the approvals and the call stay proven.)
// The same view also repeats a wrong `not_waiting` written by another graph's resumer
// (a-resumer-never-takes-another-graphs-thread-from-a-shared-checkpointer) or by a retry after a
// failure past the call (a-resume-cut-short-after-the-call-is-continued-not-marked-done).
// Secure: "resumed" is shown only for what the chained log proves (the deterministic
// `run_resumed` event of this request on its thread), never from the column alone.
// (test/server/approvals-api.test.ts "says whether the run continued" writes the same columns by
// hand as a stand-in for the resumer; it needs the resumer's event once this is fixed.)
import { afterEach, expect, it } from 'vitest';
import { pendingApprovalInterrupts } from '../../src/nodes/index.js';
import { describeEachDatabase } from '../support/databases.js';
import { startTestInbox, type TestInbox } from '../support/inbox.js';
import { resumerApp } from './fixtures/resumer-app.js';

describeEachDatabase('the inbox on a run nobody resumed', (context) => {
  let inbox: TestInbox | undefined;
  afterEach(async () => {
    await inbox?.close();
    inbox = undefined;
  });

  it('does not say "resumed" because an insider wrote resumed_at', async () => {
    const db = context.db();
    inbox = await startTestInbox(db);
    const app = await resumerApp(db, { registerApprovers: false });
    const pending = await app.suspend('t-never-resumed');
    await app.approve(pending);
    // The insider, with psql.
    await db.query(
      `UPDATE veridex_approvals SET resumed_at = now(), resume_outcome = 'resumed' WHERE id = $1`,
      [pending.approvalId],
    );
    // The run still waits on it, and nothing recorded a resumption.
    expect(await pendingApprovalInterrupts(app.graph, 't-never-resumed')).toHaveLength(1);
    expect(
      (await app.audit.events('t-never-resumed')).filter((e) => e.type === 'run_resumed'),
    ).toEqual([]);

    const { token } = await inbox.login('carol');
    const detail = (await (
      await inbox.call(`/api/approvals/${pending.approvalId}`, { token })
    ).json()) as { status: string; resumption?: { state: string } };
    expect(detail.status).toBe('approved');
    expect(detail.resumption?.state).not.toBe('resumed');
  });
});
