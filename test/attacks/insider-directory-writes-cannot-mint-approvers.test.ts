import { Command } from '@langchain/langgraph';
import * as ed from '@noble/ed25519';
import { expect, it } from 'vitest';
import type { ApprovalManager } from '../../src/approvals/index.js';
import { ed25519KeyId, generateKeyPair } from '../../src/audit/index.js';
import type { Database } from '../../src/db/index.js';
import { identityKey, PostgresApproverDirectory } from '../../src/identity/index.js';
import { RECHECK } from '../../src/nodes/index.js';
import { signAs, testKey } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';
import { insiderGraph, suspendedOn } from '../support/insider-graph.js';

/**
 * Adversary: an insider with psql write access to the approver directory tables
 * (`veridex_approvers`, `veridex_approver_keys`) but neither an approver's private key nor the
 * directory key. Guarantee under attack (README "Approver directory"): only rows sealed with
 * the directory key count — a key, an approver or a role written with SQL approves nothing.
 * Each test asserts the secure outcome: the $50,000 transfer does not run.
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

async function insertKey(db: Database, approver: string) {
  await db.query(
    `INSERT INTO veridex_approver_keys (key_id, approver_id, type, public_key, added_at)
     VALUES ($1, $2, 'ed25519', $3, now() - interval '1 day')`,
    [malloryKeyId, approver, malloryPublic],
  );
}

async function securityKinds(db: Database): Promise<string[]> {
  // The report is written without blocking the refused lookup: wait until it lands.
  for (let attempt = 0; attempt < 200; attempt++) {
    const { rows } = await db.query<{ payload: { kind: string } | string }>(
      `SELECT payload FROM veridex_audit_events WHERE type = 'security_event'`,
    );
    const kinds = rows.map(
      (row) => (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload).kind,
    );
    if (kinds.includes('directory_entry_unsealed')) return kinds;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return [];
}

describeEachDatabase('an insider who writes the approver directory with psql', (context) => {
  it("INSERTs a key of her own for alice and signs as alice: the decision is refused and bob's approval alone moves nothing", async () => {
    const db = context.db();
    const { graph, ledger, approvals } = await insiderGraph(db);
    const pending = await suspendedOn(graph, 't-key-insert');
    await insertKey(db, 'alice');
    const forged = signAs(pending, 'mallory-the-dba', 'approve', { approver: 'alice' });
    const refused = await tryDecide(approvals, pending.approvalId, forged);
    expect(refused).toMatchObject({ code: 'decision_key_unknown' });
    await approvals.decide(pending.approvalId, signAs(pending, 'bob'));
    await graph.invoke(new Command({ resume: RECHECK }), config('t-key-insert'));
    expect(ledger.transfers).toHaveLength(0);
    expect(await securityKinds(db)).toContain('directory_entry_unsealed');
  });

  it('INSERTs a whole approver with her key: her approval next to bob’s does not make a dual approval', async () => {
    const db = context.db();
    const { graph, ledger, approvals } = await insiderGraph(db);
    const pending = await suspendedOn(graph, 't-approver-insert');
    await db.query(
      `INSERT INTO veridex_approvers (id, identity_key, display_name, roles, added_at)
       VALUES ('mallory', $1, 'Mallory', '[]'::jsonb, now() - interval '1 day')`,
      [identityKey('mallory')],
    );
    await insertKey(db, 'mallory');
    expect(await approvals.directory.get('mallory')).toBeUndefined();
    await tryDecide(
      approvals,
      pending.approvalId,
      signAs(pending, 'mallory-the-dba', 'approve', {
        approver: 'mallory',
      }),
    );
    await approvals.decide(pending.approvalId, signAs(pending, 'bob'));
    await graph.invoke(new Command({ resume: RECHECK }), config('t-approver-insert'));
    expect(ledger.transfers).toHaveLength(0);
  });

  it("UPDATEs carol's roles to the role the route needs: carol's approval does not count for it", async () => {
    const db = context.db();
    const { graph, ledger, approvals } = await insiderGraph(db, {
      route: 'policy_pack',
      packs: {
        escalation: {
          tiers: [{ name: 'treasury', approvers: ['role:treasury'], timeoutMs: 3_600_000 }],
        },
      },
      roles: { alice: ['treasury'] },
    });
    const pending = await suspendedOn(graph, 't-role-update');
    await db.query(`UPDATE veridex_approvers SET roles = '["treasury"]'::jsonb WHERE id = 'carol'`);
    await tryDecide(approvals, pending.approvalId, signAs(pending, 'carol'));
    await graph.invoke(new Command({ resume: RECHECK }), config('t-role-update'));
    expect(ledger.transfers).toHaveLength(0);
    // The roles alice was given through the directory still work.
    await approvals.decide(pending.approvalId, signAs(pending, 'alice'));
    await graph.invoke(new Command({ resume: RECHECK }), config('t-role-update'));
    expect(ledger.transfers).toHaveLength(1);
  });

  it("clears revoked_at on bob's revoked key: a decision signed with it after the revocation does not count", async () => {
    const db = context.db();
    const { graph, ledger, approvals } = await insiderGraph(db);
    const pending = await suspendedOn(graph, 't-unrevoke');
    const bobKeyId = ed25519KeyId(ed.getPublicKey(testKey('bob')));
    await approvals.directory.revoke('bob', { keyId: bobKeyId });
    await db.query(`UPDATE veridex_approver_keys SET revoked_at = NULL WHERE key_id = $1`, [
      bobKeyId,
    ]);
    await tryDecide(approvals, pending.approvalId, signAs(pending, 'bob'));
    await approvals.decide(pending.approvalId, signAs(pending, 'alice'));
    await graph.invoke(new Command({ resume: RECHECK }), config('t-unrevoke'));
    expect(ledger.transfers).toHaveLength(0);
  });

  it("moves carol's sealed key row to alice's name: neither counts as alice", async () => {
    const db = context.db();
    const { graph, ledger, approvals } = await insiderGraph(db);
    const pending = await suspendedOn(graph, 't-key-move');
    const carolKeyId = ed25519KeyId(ed.getPublicKey(testKey('carol')));
    await db.query(`UPDATE veridex_approver_keys SET approver_id = 'alice' WHERE key_id = $1`, [
      carolKeyId,
    ]);
    await tryDecide(
      approvals,
      pending.approvalId,
      signAs(pending, 'carol', 'approve', {
        approver: 'alice',
      }),
    );
    await approvals.decide(pending.approvalId, signAs(pending, 'bob'));
    await graph.invoke(new Command({ resume: RECHECK }), config('t-key-move'));
    expect(ledger.transfers).toHaveLength(0);
  });

  it('seals the rows she wrote with a directory key of her own: this deployment does not trust it', async () => {
    const db = context.db();
    const { graph, ledger, approvals } = await insiderGraph(db);
    const pending = await suspendedOn(graph, 't-own-seal');
    const hers = new PostgresApproverDirectory(db, { sealKey: generateKeyPair().privateKey });
    await hers.add({ id: 'mallory', publicKeys: [ed.getPublicKey(mallory)] });
    expect(await hers.get('mallory')).toBeDefined();
    await tryDecide(
      approvals,
      pending.approvalId,
      signAs(pending, 'mallory-the-dba', 'approve', {
        approver: 'mallory',
      }),
    );
    await approvals.decide(pending.approvalId, signAs(pending, 'bob'));
    await graph.invoke(new Command({ resume: RECHECK }), config('t-own-seal'));
    expect(ledger.transfers).toHaveLength(0);
  });

  it('control: an approver added through the directory with its key counts (the harness is sound)', async () => {
    const db = context.db();
    const { graph, ledger, approvals } = await insiderGraph(db);
    const pending = await suspendedOn(graph, 't-control');
    await approvals.directory.add({ id: 'dave', publicKeys: [ed.getPublicKey(testKey('dave'))] });
    await approvals.decide(pending.approvalId, signAs(pending, 'dave'));
    await approvals.decide(pending.approvalId, signAs(pending, 'bob'));
    await graph.invoke(new Command({ resume: RECHECK }), config('t-control'));
    expect(ledger.transfers).toHaveLength(1);
  });
});
