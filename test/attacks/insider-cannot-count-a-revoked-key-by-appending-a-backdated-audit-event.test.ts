import { Command } from '@langchain/langgraph';
import * as ed from '@noble/ed25519';
import { expect, it } from 'vitest';
import {
  AuditLog,
  deriveEventId,
  Ed25519Signer,
  ed25519KeyId,
  generateKeyPair,
  PostgresAuditStore,
  sealEvidence,
  verifyEvidence,
} from '../../src/audit/index.js';
import type { Database } from '../../src/db/index.js';
import type { SignedDecision } from '../../src/identity/index.js';
import { RECHECK } from '../../src/nodes/index.js';
import { signAs, testKey } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';
import { insiderGraph, suspendedOn } from '../support/insider-graph.js';

/**
 * Adversary: a thief holding alice's stolen private key, working with an insider who has psql
 * write access to every table (no directory key, no evidence key). alice's key is revoked while
 * a $50,000 transfer waits. Guarantee under attack (prove-approval.ts `countedAt`, README
 * "Security", insider row): a revoked key's decision counts only if the hash-chained audit log
 * recorded it counted before the revocation — "backdating needs a re-chained log too", which
 * an earlier bundle or a published head would expose.
 *
 * The attack needs no re-chaining: the insider APPENDS one `approval_decided` event at the end
 * of the thread's chain (a proper link from the current head, exactly what `AuditLog.append`
 * writes; here done with an AuditLog whose clock reads the past, i.e. the same INSERT psql
 * would do) whose `timestamp` field says "before the revocation". The chain stays valid and is
 * an honest extension of every earlier head; nothing orders the claimed timestamp against the
 * revocation (which lives on another thread). `prove` reads that timestamp as "counted at".
 * The honest agent then pays and seals the thread itself, and `veridex verify --approvers`
 * reads the same timestamp, so the bundle verifies with the revoked key's approval.
 *
 * Each test asserts the SECURE outcome (fails today).
 */
const config = (threadId: string) => ({ configurable: { thread_id: threadId } });
const aliceKeyId = ed25519KeyId(ed.getPublicKey(testKey('alice')));
const alicePublic = Buffer.from(ed.getPublicKey(testKey('alice'))).toString('base64');
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The insider writes the thief's statement into the row (as the existing insider tests do). */
async function writeApproved(
  db: Database,
  approvalId: string,
  decisionId: string,
  signed: SignedDecision,
) {
  const record = {
    decisionId,
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
  return record;
}

async function thiefAndInsider(db: Database, threadId: string) {
  const built = await insiderGraph(db, { route: 'human_required' });
  const { graph, approvals } = built;
  const pending = await suspendedOn(graph, threadId);
  const opened = Date.parse((await approvals.require(pending.approvalId)).createdAt);
  await pause(50);
  // alice reports the theft; the operator revokes her key while the transfer waits.
  await approvals.directory.revoke('alice', { keyId: aliceKeyId });
  const backdated = signAs(pending, 'alice', 'approve', { decidedAt: new Date(opened + 10) });
  // The id syncAudit would give this record, so no later sync appends a second, honest copy.
  const decisionId = 'dec_thief';
  const record = await writeApproved(db, pending.approvalId, decisionId, backdated);
  // One appended event, a valid link at the head of the chain, dated before the revocation.
  const backdatedLog = new AuditLog({
    store: new PostgresAuditStore(db),
    now: () => new Date(opened + 20),
  });
  await backdatedLog.append({
    threadId,
    eventId: deriveEventId(threadId, 'approval_decided', pending.approvalId, decisionId),
    type: 'approval_decided',
    payload: {
      approvalId: pending.approvalId,
      proposalHash: pending.proposalHash,
      approver: 'alice',
      approverName: 'Alice',
      decision: 'approve',
      tier: 0,
      verified: true,
    },
    verbatim: { signed: record.signed },
  });
  await graph.invoke(new Command({ resume: RECHECK }), config(threadId));
  return { ...built, pending };
}

describeEachDatabase(
  'a thief with a revoked key and an insider who appends one audit event',
  (context) => {
    it("alice's key is revoked while the transfer waits; the insider writes the thief's backdated statement into the row and appends an approval_decided event dated before the revocation: the transfer does not run", async () => {
      const db = context.db();
      const { ledger, audit } = await thiefAndInsider(db, 't-appended-backdated');
      // The chain the insider extended is intact: nothing was rewritten.
      expect((await audit.verify('t-appended-backdated')).valid).toBe(true);
      expect(ledger.transfers).toHaveLength(0);
    });

    it('the evidence the honest agent seals of that thread does not verify against the directory that records the revocation', async () => {
      const db = context.db();
      const { audit, approvals, ledger } = await thiefAndInsider(db, 't-appended-evidence');
      const agent = new Ed25519Signer(generateKeyPair().privateKey);
      const bundle = JSON.parse(
        JSON.stringify(
          sealEvidence(
            { threadId: 't-appended-evidence', events: await audit.events('t-appended-evidence') },
            [agent],
          ),
        ),
      );
      // The auditor's approvers.json (`veridex approvers export`): alice's key, revoked.
      const approvers = await approvals.directory.list();
      expect(approvers.find((a) => a.id === 'alice')?.keys[0]?.revokedAt).toBeDefined();
      const result = verifyEvidence(bundle, { keys: [agent.verifier()], approvers });
      // Either the gate held (nothing ran, nothing to prove) or the auditor is told.
      expect(ledger.transfers.length === 0 || !result.valid).toBe(true);
    });
  },
);
