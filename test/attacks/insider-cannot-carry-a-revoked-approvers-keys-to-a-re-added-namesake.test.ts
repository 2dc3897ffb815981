import { Command } from '@langchain/langgraph';
import * as ed from '@noble/ed25519';
import { expect, it } from 'vitest';
import type { ApprovalManager } from '../../src/approvals/index.js';
import type { Database } from '../../src/db/index.js';
import type { PostgresApproverDirectory } from '../../src/identity/index.js';
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
 * approved as the new dave. Now revoking an approver also seals each of its keys revoked, and a
 * key whose sealed `addedAt` is earlier than its approver entry's sealed `addedAt` is read as an
 * earlier approver's key and ignored (postgres-approver-directory.ts), so neither the rows saved
 * after the revocation nor those saved before it approve. The tests assert the SECURE outcome.
 */
const config = (threadId: string) => ({ configurable: { thread_id: threadId } });

async function tryDecide(approvals: ApprovalManager, id: string, input: unknown) {
  try {
    return await approvals.decide(id, input as never);
  } catch (error) {
    return error;
  }
}

/** Puts saved key rows back as they were. */
async function putBack(db: Database, saved: Array<Record<string, unknown>>) {
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
    await putBack(db, saved);
    const pending = await suspendedOn(graph, 't-namesake');
    await tryDecide(approvals, pending.approvalId, signAs(pending, 'dave'));
    await graph.invoke(new Command({ resume: RECHECK }), config('t-namesake'));
    expect(ledger.transfers).toHaveLength(0);
  });

  it('the insider saved dave’s key rows BEFORE the revocation (active, sealed) and puts them back after the re-add: the old key does not approve', async () => {
    const db = context.db();
    const { graph, ledger, approvals } = await insiderGraph(db, { route: 'human_required' });
    await approvals.directory.add({ id: 'dave', publicKeys: [ed.getPublicKey(testKey('dave'))] });
    const { rows: saved } = await db.query<Record<string, unknown>>(
      `SELECT * FROM veridex_approver_keys WHERE approver_id = 'dave'`,
    );
    await approvals.directory.revoke('dave');
    await db.query(`DELETE FROM veridex_approver_keys WHERE approver_id = 'dave'`);
    await db.query(`DELETE FROM veridex_approvers WHERE id = 'dave'`);
    // Later (a rehire): the clock has moved on since dave's key was added.
    await new Promise((resolve) => setTimeout(resolve, 5));
    await approvals.directory.add({ id: 'dave', displayName: 'Dave' });
    await putBack(db, saved);
    // The carried key is no key of the new entry: it predates it. It is named, and an operator
    // vouching for dave's rows as they stand does not make it his.
    expect((await approvals.directory.get('dave'))?.keys).toEqual([]);
    const directory = approvals.directory as PostgresApproverDirectory;
    expect(await directory.unsealed()).toEqual([
      { approver: 'dave', keyId: saved[0]!.key_id, reason: 'predates_approver' },
    ]);
    await expect(directory.vouch('dave')).rejects.toMatchObject({ code: 'identity_ambiguous' });
    const pending = await suspendedOn(graph, 't-namesake-early');
    await tryDecide(approvals, pending.approvalId, signAs(pending, 'dave'));
    await graph.invoke(new Command({ resume: RECHECK }), config('t-namesake-early'));
    expect(ledger.transfers).toHaveLength(0);
  });

  it('revoking an approver seals each of its keys revoked; revoking again seals the keys of an approver revoked before that', async () => {
    const db = context.db();
    const { approvals } = await insiderGraph(db, { route: 'human_required' });
    const directory = approvals.directory as PostgresApproverDirectory;
    await directory.add({ id: 'dave', publicKeys: [ed.getPublicKey(testKey('dave'))] });
    const revoked = await directory.revoke('dave');
    expect(revoked.keys.map((key) => key.revokedAt)).toEqual([revoked.revokedAt]);
    // An approver revoked the old way: its own row sealed revoked, its key rows left active.
    await directory.add({ id: 'erin', publicKeys: [ed.getPublicKey(testKey('erin'))] });
    const erin = (await directory.get('erin'))!;
    const at = new Date().toISOString();
    await db.query(`UPDATE veridex_approvers SET revoked_at = $2, seal = $3 WHERE id = $1`, [
      'erin',
      at,
      directory.seal.sealApprover({ ...erin, revokedAt: at }),
    ]);
    expect((await directory.get('erin'))?.keys[0]?.revokedAt).toBeUndefined();
    const repaired = await directory.revoke('erin');
    expect(repaired.revokedAt).toBe(at);
    expect(repaired.keys.map((key) => key.revokedAt)).toEqual([at]);
  });

  it('control: a key enrolled for the re-added dave approves', async () => {
    const db = context.db();
    const { graph, ledger, approvals } = await insiderGraph(db, { route: 'human_required' });
    await approvals.directory.add({ id: 'dave', publicKeys: [ed.getPublicKey(testKey('dave'))] });
    await approvals.directory.revoke('dave');
    await db.query(`DELETE FROM veridex_approver_keys WHERE approver_id = 'dave'`);
    await db.query(`DELETE FROM veridex_approvers WHERE id = 'dave'`);
    await approvals.directory.add({ id: 'dave', displayName: 'Dave' });
    await approvals.directory.addKey('dave', ed.getPublicKey(testKey('dave-rehired')));
    const pending = await suspendedOn(graph, 't-namesake-control');
    await approvals.decide(
      pending.approvalId,
      signAs(pending, 'dave-rehired', 'approve', { approver: 'dave' }),
    );
    await graph.invoke(new Command({ resume: RECHECK }), config('t-namesake-control'));
    expect(ledger.transfers).toHaveLength(1);
  });
});
