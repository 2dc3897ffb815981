import { Command } from '@langchain/langgraph';
import * as ed from '@noble/ed25519';
import { expect, it } from 'vitest';
import type { ApprovalManager, ApprovalPack } from '../../src/approvals/index.js';
import { ed25519KeyId } from '../../src/audit/ed25519-signer.js';
import type { Database } from '../../src/db/index.js';
import { signDecision } from '../../src/identity/index.js';
import { RECHECK } from '../../src/nodes/index.js';
import { signAs, testKey } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';
import { insiderGraph, suspendedOn } from '../support/insider-graph.js';
import { rewriteEvents } from '../support/rechain.js';

/**
 * Adversary (b): an insider with psql write access to veridex_approvals, veridex_approvers,
 * veridex_approver_keys, veridex_audit_events, but WITHOUT any approver's private key.
 * Guarantee under attack: "no approval can be counted, and no approved call can run, without
 * the signed decisions that prove it". Each test asserts the secure outcome: no transfer.
 */
const config = (threadId: string) => ({ configurable: { thread_id: threadId } });
const HOUR = 60 * 60 * 1000;

// The insider's own key pair (a key no approver ever held).
const insiderPrivate = testKey('mallory-the-dba');
const insiderPublic = ed.getPublicKey(insiderPrivate);

const graphOn = insiderGraph;
const suspended = suspendedOn;

/** Sends a decision, swallowing a refusal (the test judges by what ran). */
async function tryDecide(approvals: ApprovalManager, id: string, input: unknown) {
  try {
    return await approvals.decide(id, input as never);
  } catch (error) {
    return error;
  }
}

// Tier 0: two of ops for the first hour; tier 1 (after an hour): any one of ops or directors.
const twoTierPacks: Record<string, ApprovalPack> = {
  escalation: {
    tiers: [
      { name: 'ops-pair', approvers: ['role:ops'], requiredApprovals: 2, timeoutMs: HOUR },
      {
        name: 'after-hours',
        approvers: ['role:ops', 'role:director'],
        requiredApprovals: 1,
        timeoutMs: HOUR,
      },
    ],
  },
};

async function readDecisions(db: Database, id: string) {
  const { rows } = await db.query<{ decisions: unknown }>(
    `SELECT decisions FROM veridex_approvals WHERE id = $1`,
    [id],
  );
  const raw = rows[0]!.decisions;
  return (typeof raw === 'string' ? JSON.parse(raw) : raw) as Array<Record<string, unknown>>;
}

describeEachDatabase('an insider with database write access but no approver key', (context) => {
  it("swaps the public key in alice's registered key row (key id unchanged): a signature by the insider's key under alice's key id does not count", async () => {
    const db = context.db();
    const { graph, ledger, approvals } = await graphOn(db, { route: 'human_required' });
    const pending = await suspended(graph, 't-keyswap');
    const aliceKeyId = ed25519KeyId(ed.getPublicKey(testKey('alice')));
    await db.query(`UPDATE veridex_approver_keys SET public_key = $2 WHERE key_id = $1`, [
      aliceKeyId,
      Buffer.from(insiderPublic).toString('base64'),
    ]);
    const forged = signDecision(
      {
        request: { approvalId: pending.approvalId, proposalHash: pending.proposalHash },
        decision: 'approve',
        approver: 'alice',
      },
      insiderPrivate,
    );
    // Presented under alice's real key id.
    await tryDecide(approvals, pending.approvalId, { ...forged, keyId: aliceKeyId });
    await graph.invoke(new Command({ resume: RECHECK }), config('t-keyswap'));
    expect(ledger.transfers).toHaveLength(0);
  });

  it('relabels a tier-0 decision as tier 1 and flips the row approved: a later, smaller tier is not counted before its deadline opened it', async () => {
    const db = context.db();
    const packs = twoTierPacks;
    const { graph, ledger, approvals } = await graphOn(db, {
      route: 'policy_pack',
      packs,
      roles: { alice: ['ops'], bob: ['ops'] },
    });
    const pending = await suspended(graph, 't-tier-relabel');
    const after = await approvals.decide(pending.approvalId, signAs(pending, 'alice'));
    expect(after.status).toBe('pending'); // one of two at tier 0, as configured
    const decisions = (await readDecisions(db, pending.approvalId)).map((d) => ({ ...d, tier: 1 }));
    await db.query(
      `UPDATE veridex_approvals SET status = 'approved', tier_index = 1, decisions = $2 WHERE id = $1`,
      [pending.approvalId, JSON.stringify(decisions)],
    );
    await graph.invoke(new Command({ resume: RECHECK }), config('t-tier-relabel'));
    expect(ledger.transfers).toHaveLength(0);
  });

  it('moves expires_at into the past to open tier 1 early: one approval a minute after the request does not pass a tier that needs two for an hour', async () => {
    const db = context.db();
    const packs = twoTierPacks;
    const { graph, ledger, approvals } = await graphOn(db, {
      route: 'policy_pack',
      packs,
      roles: { alice: ['ops'], bob: ['ops'] },
    });
    const pending = await suspended(graph, 't-tier-early');
    await db.query(
      `UPDATE veridex_approvals SET expires_at = now() - interval '1 second' WHERE id = $1`,
      [pending.approvalId],
    );
    // alice alone, honestly signing, is counted at tier 1 because the DBA opened it early.
    await tryDecide(approvals, pending.approvalId, signAs(pending, 'alice'));
    await graph.invoke(new Command({ resume: RECHECK }), config('t-tier-early'));
    expect(ledger.transfers).toHaveLength(0);
  });

  it('backdates created_at and expires_at by 90 minutes: the tier the audit log says opened an hour from now does not count one approval', async () => {
    const db = context.db();
    const packs = twoTierPacks;
    const { graph, ledger, approvals } = await graphOn(db, {
      route: 'policy_pack',
      packs,
      roles: { alice: ['ops'], bob: ['ops'] },
    });
    const pending = await suspended(graph, 't-backdated');
    await db.query(
      `UPDATE veridex_approvals SET created_at = created_at - interval '90 minutes',
         expires_at = expires_at - interval '90 minutes' WHERE id = $1`,
      [pending.approvalId],
    );
    // The row now says tier 1 opened half an hour ago: alice alone is counted there at decide time.
    await tryDecide(approvals, pending.approvalId, signAs(pending, 'alice'));
    await graph.invoke(new Command({ resume: RECHECK }), config('t-backdated'));
    expect(ledger.transfers).toHaveLength(0);
  });

  it("with alice's revoked (stolen) key, writes a backdated signed statement into the row: a key revoked before the request was opened never approves it", async () => {
    const db = context.db();
    const { graph, ledger, approvals } = await graphOn(db, { route: 'human_required' });
    const aliceKeyId = ed25519KeyId(ed.getPublicKey(testKey('alice')));
    // alice reports her key stolen; it is revoked BEFORE the agent even proposes the transfer.
    await approvals.directory.revoke('alice', { keyId: aliceKeyId });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const pending = await suspended(graph, 't-revoked');
    // Through the API the revoked key is refused...
    const refused = await tryDecide(approvals, pending.approvalId, signAs(pending, 'alice'));
    expect(refused).toMatchObject({ code: 'decision_key_unknown' });
    // ...so the thief, who also has psql, signs a statement dated a day ago and writes it in.
    const signed = signAs(pending, 'alice', 'approve', {
      decidedAt: new Date(Date.now() - 24 * HOUR),
    });
    const record = {
      decisionId: 'dec_backdated',
      approver: 'alice',
      decision: 'approve',
      tier: 0,
      decidedAt: new Date().toISOString(),
      verified: true,
      signed: {
        statement: signed.statement,
        keyId: signed.keyId,
        signature: signed.signature,
        publicKey: Buffer.from(ed.getPublicKey(testKey('alice'))).toString('base64'),
      },
    };
    await db.query(
      `UPDATE veridex_approvals SET status = 'approved', decisions = $2 WHERE id = $1`,
      [pending.approvalId, JSON.stringify([record])],
    );
    await graph.invoke(new Command({ resume: RECHECK }), config('t-revoked'));
    expect(ledger.transfers).toHaveLength(0);
  });

  it('control: two real signed approvals still pay once (the harness is sound)', async () => {
    const db = context.db();
    const { graph, ledger, approvals } = await graphOn(db, { route: 'dual_approval' });
    const pending = await suspended(graph, 't-control');
    await approvals.decide(pending.approvalId, signAs(pending, 'alice'));
    await approvals.decide(pending.approvalId, signAs(pending, 'bob'));
    await graph.invoke(new Command({ resume: RECHECK }), config('t-control'));
    expect(ledger.transfers).toHaveLength(1);
  });
});

describeEachDatabase('an insider who erases a signed rejection', (context) => {
  async function rejectedThenReopened(db: Database, threadId: string) {
    const built = await graphOn(db, { route: 'human_required' });
    const pending = await suspended(built.graph, threadId);
    // bob looks at the transfer and rejects it, signed. That is final.
    const rejected = await built.approvals.decide(
      pending.approvalId,
      signAs(pending, 'bob', 'reject'),
    );
    expect(rejected.status).toBe('rejected');
    // The DBA deletes bob's rejection and reopens the row; alice (who never saw bob's
    // rejection) then approves through the normal API.
    await db.query(
      `UPDATE veridex_approvals SET status = 'pending', decided_at = NULL, decisions = '[]' WHERE id = $1`,
      [pending.approvalId],
    );
    await tryDecide(built.approvals, pending.approvalId, signAs(pending, 'alice'));
    await built.graph.invoke(new Command({ resume: RECHECK }), config(threadId));
    return { ...built, pending };
  }

  it('reopens a request bob rejected (signed) and lets alice approve it: a signed rejection is final, the transfer does not run', async () => {
    const { ledger } = await rejectedThenReopened(context.db(), 't-unreject');
    expect(ledger.transfers).toHaveLength(0);
  });

  it("the sealed evidence of that thread, holding bob's signed rejection and then the transfer, does not verify", async () => {
    const { audit, pending } = await rejectedThenReopened(context.db(), 't-unreject-evidence');
    const { Ed25519Signer, generateKeyPair, sealEvidence, verifyEvidence } = await import(
      '../../src/audit/index.js'
    );
    const agent = new Ed25519Signer(generateKeyPair().privateKey);
    // The gate refuses to pay now, so the insider (who also holds the agent key) writes the
    // execution the evidence should never prove.
    const events = rewriteEvents(await audit.events('t-unreject-evidence'), (list) => {
      const last = list.at(-1)!;
      list.push({
        ...last,
        eventId: 'forged-execution',
        type: 'tool_executed',
        payload: { toolCallId: pending.toolCallId, toolName: 'transfer' },
      });
      return list;
    });
    expect(
      events.some((e) => e.type === 'approval_decided' && e.payload.decision === 'reject'),
    ).toBe(true);
    const bundle = JSON.parse(
      JSON.stringify(sealEvidence({ threadId: 't-unreject-evidence', events }, [agent])),
    );
    const result = verifyEvidence(bundle, { keys: [agent.verifier()] });
    expect(events.some((e) => e.type === 'tool_executed')).toBe(true);
    expect(result.valid).toBe(false);
  });
});
