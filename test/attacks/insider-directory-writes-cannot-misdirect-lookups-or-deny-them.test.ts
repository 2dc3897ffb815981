import { Command } from '@langchain/langgraph';
import * as ed from '@noble/ed25519';
import { expect, it } from 'vitest';
import type { ApprovalManager } from '../../src/approvals/index.js';
import { ed25519KeyId } from '../../src/audit/index.js';
import type { Database } from '../../src/db/index.js';
import { identityKey, type PostgresApproverDirectory } from '../../src/identity/index.js';
import { RECHECK } from '../../src/nodes/index.js';
import { signAs, testKey } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';
import { insiderGraph, suspendedOn } from '../support/insider-graph.js';

/**
 * Adversary: an insider with psql write access to veridex_approvers / veridex_approver_keys but
 * no approver's private key and no directory key. The seals cover each row's id, display name,
 * roles, times and key material — but NOT the `identity_key` column, which every by-name
 * lookup (`ApproverDirectory.get`: revoke, vouch, invite, listPending) selects on; and rows
 * are decoded BEFORE their seals are checked. Guarantees under attack (README "The database is
 * not the authority: the directory key is"): an unsealed or edited row counts for nothing —
 * in particular it cannot steer what an operator's `veridex approvers revoke|seal` changes, and
 * it is ignored rather than breaking every lookup. Each test asserts the secure outcome.
 */
const config = (threadId: string) => ({ configurable: { thread_id: threadId } });
const mallory = testKey('mallory-the-dba');
const malloryPublic = Buffer.from(ed.getPublicKey(mallory)).toString('base64');
const malloryKeyId = ed25519KeyId(ed.getPublicKey(mallory));

async function tryDecide(approvals: ApprovalManager, id: string, input: unknown) {
  try {
    return await approvals.decide(id, input as never);
  } catch (error) {
    return error;
  }
}

/** Swaps two approvers' `identity_key` values (the unique index needs a third value in between). */
async function swapIdentityKeys(db: Database, a: string, b: string) {
  await db.query(`UPDATE veridex_approvers SET identity_key = 'tmp-swap' WHERE id = $1`, [a]);
  await db.query(`UPDATE veridex_approvers SET identity_key = $2 WHERE id = $1`, [
    b,
    identityKey(a),
  ]);
  await db.query(`UPDATE veridex_approvers SET identity_key = $2 WHERE id = $1`, [
    a,
    identityKey(b),
  ]);
}

describeEachDatabase('an insider who edits the unsealed identity_key column', (context) => {
  it("swaps alice's and carol's identity_key before the operator revokes alice (stolen key): alice is revoked, not carol, and the thief's decision with alice's key does not count", async () => {
    const db = context.db();
    const { graph, ledger, approvals } = await insiderGraph(db, { route: 'human_required' });
    const pending = await suspendedOn(graph, 't-misdirected-revoke');
    await swapIdentityKeys(db, 'alice', 'carol');
    // The operator does what `veridex approvers revoke alice` does.
    await approvals.directory.revoke('alice');
    // The thief signs with alice's stolen key through the ordinary API.
    await tryDecide(approvals, pending.approvalId, signAs(pending, 'alice'));
    await graph.invoke(new Command({ resume: RECHECK }), config('t-misdirected-revoke'));
    expect(ledger.transfers).toHaveLength(0);
    // And the honest carol was not locked out in alice's place.
    const { rows } = await db.query<{ id: string; revoked_at: Date | null }>(
      `SELECT id, revoked_at FROM veridex_approvers ORDER BY id`,
    );
    expect(rows.find((row) => row.id === 'carol')?.revoked_at).toBeNull();
  });

  it('gives her own inserted approver row alice’s identity_key before an operator vouches for alice (`veridex approvers seal alice` after a restore): her row is not sealed, her approval does not count', async () => {
    const db = context.db();
    const { graph, ledger, approvals } = await insiderGraph(db, { route: 'human_required' });
    const pending = await suspendedOn(graph, 't-misdirected-vouch');
    await db.query(`UPDATE veridex_approvers SET identity_key = 'moved-away' WHERE id = 'alice'`);
    await db.query(
      `INSERT INTO veridex_approvers (id, identity_key, display_name, roles, added_at)
       VALUES ('mallory', $1, 'Alice', '[]'::jsonb, now() - interval '1 day')`,
      [identityKey('alice')],
    );
    await db.query(
      `INSERT INTO veridex_approver_keys (key_id, approver_id, type, public_key, added_at)
       VALUES ($1, 'mallory', 'ed25519', $2, now() - interval '1 day')`,
      [malloryKeyId, malloryPublic],
    );
    // The operator vouches for "alice" as the README tells them to after restoring a backup.
    await (approvals.directory as PostgresApproverDirectory).vouch('alice').catch(() => undefined);
    await tryDecide(
      approvals,
      pending.approvalId,
      signAs(pending, 'mallory-the-dba', 'approve', { approver: 'mallory' }),
    );
    await graph.invoke(new Command({ resume: RECHECK }), config('t-misdirected-vouch'));
    expect(ledger.transfers).toHaveLength(0);
  });

  it("points a name at alice's sealed row: listPending for that name does not show what only alice's roles may decide", async () => {
    const db = context.db();
    const { graph, approvals } = await insiderGraph(db, {
      route: 'policy_pack',
      packs: {
        escalation: {
          tiers: [{ name: 'treasury', approvers: ['role:treasury'], timeoutMs: 3_600_000 }],
        },
      },
      roles: { alice: ['treasury'] },
    });
    await suspendedOn(graph, 't-misdirected-list');
    expect(await approvals.listPending({ approver: 'carol' })).toHaveLength(0);
    await swapIdentityKeys(db, 'alice', 'carol');
    expect(await approvals.listPending({ approver: 'carol' })).toHaveLength(0);
  });
});

describeEachDatabase('an insider who writes rows that do not decode', (context) => {
  it("inserts an unsealed key row for alice with added_at = 'infinity': it is ignored, alice's real decision still counts", async () => {
    const db = context.db();
    const { graph, ledger, approvals } = await insiderGraph(db, { route: 'human_required' });
    const pending = await suspendedOn(graph, 't-infinity-key');
    await db.query(
      `INSERT INTO veridex_approver_keys (key_id, approver_id, type, public_key, added_at)
       VALUES ($1, 'alice', 'ed25519', $2, 'infinity')`,
      [malloryKeyId, malloryPublic],
    );
    const decided = await tryDecide(approvals, pending.approvalId, signAs(pending, 'alice'));
    expect(decided).not.toBeInstanceOf(Error);
    await graph.invoke(new Command({ resume: RECHECK }), config('t-infinity-key'));
    expect(ledger.transfers).toHaveLength(1);
  });

  it("inserts an unsealed approver row with added_at = 'infinity': listing the directory still returns the sealed approvers", async () => {
    const db = context.db();
    const { approvals } = await insiderGraph(db);
    await db.query(
      `INSERT INTO veridex_approvers (id, identity_key, display_name, roles, added_at)
       VALUES ('zed', $1, 'Zed', '[]'::jsonb, 'infinity')`,
      [identityKey('zed')],
    );
    const listed = await approvals.directory.list().catch((error: unknown) => error);
    expect(Array.isArray(listed) ? listed.map((a) => a.id) : listed).toEqual([
      'alice',
      'bob',
      'carol',
    ]);
  });

  it("frees alice's identity_key and inserts a look-alike row ('аlice', Cyrillic) holding it: the operator's revoke of alice still revokes alice", async () => {
    const db = context.db();
    const { graph, ledger, approvals } = await insiderGraph(db, { route: 'human_required' });
    const pending = await suspendedOn(graph, 't-lookalike-revoke');
    await db.query(`UPDATE veridex_approvers SET identity_key = 'moved' WHERE id = 'alice'`);
    await db.query(
      `INSERT INTO veridex_approvers (id, identity_key, display_name, roles, added_at)
       VALUES ('\u0430lice', $1, 'Alice', '[]'::jsonb, now())`,
      [identityKey('alice')],
    );
    const revoked = await approvals.directory.revoke('alice');
    expect(revoked.id).toBe('alice');
    expect(revoked.revokedAt).toBeDefined();
    await tryDecide(approvals, pending.approvalId, signAs(pending, 'alice'));
    await graph.invoke(new Command({ resume: RECHECK }), config('t-lookalike-revoke'));
    expect(ledger.transfers).toHaveLength(0);
  });
});
