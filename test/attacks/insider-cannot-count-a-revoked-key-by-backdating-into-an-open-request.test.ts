import { Command } from '@langchain/langgraph';
import * as ed from '@noble/ed25519';
import { expect, it } from 'vitest';
import type { ApprovalManager } from '../../src/approvals/index.js';
import { ed25519KeyId } from '../../src/audit/ed25519-signer.js';
import type { Database } from '../../src/db/index.js';
import type { SignedDecision } from '../../src/identity/index.js';
import { RECHECK } from '../../src/nodes/index.js';
import { signAs, testKey } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';
import { insiderGraph, suspendedOn } from '../support/insider-graph.js';

/**
 * Adversary: a thief holding alice's stolen private key, working with an insider who has psql
 * write access to veridex_approvals (but no other approver key and no directory key). alice
 * reports the theft and her key (or alice herself) is revoked WHILE a $50,000 transfer waits for
 * approval. Guarantee under attack (README "Who is an approver", ApproverDirectory.revoke):
 * "decisions not yet counted that were signed with it are refused from then on" — a revoked key
 * approves nothing afterwards, through the API or written into the row. The existing suite only
 * covers a key revoked BEFORE the request was opened. Each test asserts the secure outcome.
 */
const config = (threadId: string) => ({ configurable: { thread_id: threadId } });
const aliceKeyId = ed25519KeyId(ed.getPublicKey(testKey('alice')));
const alicePublic = Buffer.from(ed.getPublicKey(testKey('alice'))).toString('base64');
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function tryDecide(approvals: ApprovalManager, id: string, input: unknown) {
  try {
    return await approvals.decide(id, input as never);
  } catch (error) {
    return error;
  }
}

/** The insider writes the thief's signed statement into the row and marks it approved. */
async function writeApproved(db: Database, approvalId: string, signed: SignedDecision) {
  const record = {
    decisionId: 'dec_thief',
    approver: 'alice',
    approverName: 'Alice',
    decision: 'approve',
    tier: 0,
    decidedAt: signed.statement.decidedAt,
    verified: true,
    signed: {
      statement: signed.statement,
      keyId: signed.keyId,
      signature: signed.signature,
      publicKey: alicePublic,
    },
  };
  await db.query(
    `UPDATE veridex_approvals SET status = 'approved', decided_at = now(), decisions = $2 WHERE id = $1`,
    [approvalId, JSON.stringify([record])],
  );
}

describeEachDatabase('a thief with a revoked key and an insider with psql', (context) => {
  it("alice's key is revoked while the transfer waits; the thief signs a statement dated between the request and the revocation and the insider writes it in: it does not count", async () => {
    const db = context.db();
    const { graph, ledger, approvals } = await insiderGraph(db, { route: 'human_required' });
    const pending = await suspendedOn(graph, 't-revoked-while-open');
    const opened = Date.parse((await approvals.require(pending.approvalId)).createdAt);
    await pause(50);
    await approvals.directory.revoke('alice', { keyId: aliceKeyId });
    // Through the API the revoked key is refused...
    const refused = await tryDecide(approvals, pending.approvalId, signAs(pending, 'alice'));
    expect(refused).toMatchObject({ code: 'decision_key_unknown' });
    // ...so the thief dates the statement 10 ms after the request opened (before the
    // revocation), and the insider writes it into the row.
    const backdated = signAs(pending, 'alice', 'approve', { decidedAt: new Date(opened + 10) });
    await writeApproved(db, pending.approvalId, backdated);
    await graph.invoke(new Command({ resume: RECHECK }), config('t-revoked-while-open'));
    expect(ledger.transfers).toHaveLength(0);
  });

  it('alice the approver is revoked before the request opens, her key only later: a statement dated in between does not count (the earlier revocation wins)', async () => {
    const db = context.db();
    const { graph, ledger, approvals } = await insiderGraph(db, { route: 'human_required' });
    // The operator revokes alice herself first ...
    await approvals.directory.revoke('alice');
    await pause(50);
    const pending = await suspendedOn(graph, 't-approver-then-key');
    const opened = Date.parse((await approvals.require(pending.approvalId)).createdAt);
    await pause(50);
    // ... and, tidying up, her key afterwards.
    await approvals.directory.revoke('alice', { keyId: aliceKeyId });
    const backdated = signAs(pending, 'alice', 'approve', { decidedAt: new Date(opened + 10) });
    await writeApproved(db, pending.approvalId, backdated);
    await graph.invoke(new Command({ resume: RECHECK }), config('t-approver-then-key'));
    expect(ledger.transfers).toHaveLength(0);
  });

  it('control: alice revoked before the request opened, a backdated statement is refused at proof (the existing defence)', async () => {
    const db = context.db();
    const { graph, ledger, approvals } = await insiderGraph(db, { route: 'human_required' });
    await approvals.directory.revoke('alice', { keyId: aliceKeyId });
    await pause(50);
    const pending = await suspendedOn(graph, 't-revoked-before');
    const opened = Date.parse((await approvals.require(pending.approvalId)).createdAt);
    const backdated = signAs(pending, 'alice', 'approve', { decidedAt: new Date(opened + 10) });
    await writeApproved(db, pending.approvalId, backdated);
    await graph.invoke(new Command({ resume: RECHECK }), config('t-revoked-before'));
    expect(ledger.transfers).toHaveLength(0);
  });
});
