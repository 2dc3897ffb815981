import { Command } from '@langchain/langgraph';
import * as ed from '@noble/ed25519';
import { expect, it } from 'vitest';
import type { ApprovalManager } from '../../src/approvals/index.js';
import { RECHECK } from '../../src/nodes/index.js';
import { signAs, testKey } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';
import { insiderGraph, suspendedOn } from '../support/insider-graph.js';

/**
 * Adversary: dave, an approver the operator revoked (`veridex approvers revoke dave`: the
 * approver, not each key), who kept his private key, working with an insider who has psql write
 * access to the directory tables (no directory key). Later an operator adds an approver "dave"
 * again (a rehire, or "dave is missing from the inbox, please re-add him" — the insider deleted
 * the revoked row, so nothing stops the add).
 *
 * Guarantee under attack (README "The database is not the authority": a revocation cleared
 * counts nothing; `ApproverDirectory.revoke`: "decisions … signed with it are refused from then
 * on"). Key seals bind a key to an approver ID, not to the approver entry it was added to; the
 * revocation lives only in the approver row's seal. The insider saves dave's sealed key rows,
 * deletes dave, and after the re-add inserts the saved rows back unchanged: every seal verifies
 * (nothing was restored to an earlier state — the key rows never changed), and the old key
 * approves as the new dave. The test asserts the SECURE outcome (fails today).
 */
const config = (threadId: string) => ({ configurable: { thread_id: threadId } });

async function tryDecide(approvals: ApprovalManager, id: string, input: unknown) {
  try {
    return await approvals.decide(id, input as never);
  } catch (error) {
    return error;
  }
}

describeEachDatabase('a revoked approver whose id is added again', (context) => {
  it('dave is revoked; the insider deletes his rows and, once an operator re-adds "dave", puts his sealed key rows back: the old key does not approve', async () => {
    const db = context.db();
    const { graph, ledger, approvals } = await insiderGraph(db, { route: 'human_required' });
    await approvals.directory.add({ id: 'dave', publicKeys: [ed.getPublicKey(testKey('dave'))] });
    await approvals.directory.revoke('dave');
    // The insider keeps dave's key rows as they are (sealed, never revoked themselves) …
    const { rows: saved } = await db.query<Record<string, unknown>>(
      `SELECT * FROM veridex_approver_keys WHERE approver_id = 'dave'`,
    );
    expect(saved).toHaveLength(1);
    // … and removes dave.
    await db.query(`DELETE FROM veridex_approver_keys WHERE approver_id = 'dave'`);
    await db.query(`DELETE FROM veridex_approvers WHERE id = 'dave'`);
    // An operator adds "dave" (no key yet: he will enrol through an invitation).
    await approvals.directory.add({ id: 'dave', displayName: 'Dave' });
    for (const row of saved) {
      const columns = Object.keys(row);
      await db.query(
        `INSERT INTO veridex_approver_keys (${columns.join(', ')})
         VALUES (${columns.map((_, index) => `$${index + 1}`).join(', ')})`,
        columns.map((column) => {
          const value = row[column];
          return value !== null && typeof value === 'object' && !(value instanceof Date)
            ? JSON.stringify(value)
            : value;
        }),
      );
    }
    const pending = await suspendedOn(graph, 't-namesake');
    await tryDecide(approvals, pending.approvalId, signAs(pending, 'dave'));
    await graph.invoke(new Command({ resume: RECHECK }), config('t-namesake'));
    expect(ledger.transfers).toHaveLength(0);
  });
});
