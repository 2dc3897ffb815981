import { Command } from '@langchain/langgraph';
import * as ed from '@noble/ed25519';
import { describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/index.js';
import type { SignedDecision } from '../../src/identity/index.js';
import { RECHECK } from '../../src/nodes/index.js';
import { signAs, testKey, trustedApprovers } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';
import { insiderGraph, suspendedOn } from '../support/insider-graph.js';
import { paidThread } from '../support/paid-thread.js';
import { rewriteEvents } from '../support/rechain.js';
import { verifyResealed } from '../support/resealed-bundle.js';

/**
 * Defended attempts of the approvals re-pass (controls; the attacks that still work are the
 * `*.open-attack.ts` files of the same pass): an insider with psql who writes real signatures
 * into the approvals row so that one person counts twice, or a decision counts on another
 * thread's approval; and a re-sealing insider who counts an admin and the key her invitation
 * enrolled as two people in the evidence. Each asserts the secure outcome.
 */
const config = (threadId: string) => ({ configurable: { thread_id: threadId } });

function record(signed: SignedDecision, name: string, decisionId: string) {
  return {
    decisionId,
    approver: signed.statement.approver,
    decision: 'approve',
    tier: 0,
    decidedAt: signed.statement.decidedAt,
    verified: true,
    signed: {
      statement: signed.statement,
      keyId: signed.keyId,
      signature: signed.signature,
      publicKey: Buffer.from(ed.getPublicKey(testKey(name))).toString('base64'),
    },
  };
}

async function writeApproved(db: Database, approvalId: string, records: unknown[]) {
  await db.query(
    `UPDATE veridex_approvals SET status = 'approved', decided_at = now(), decisions = $2 WHERE id = $1`,
    [approvalId, JSON.stringify(records)],
  );
}

describeEachDatabase('an insider who writes real signatures into the approvals row', (context) => {
  it("harness: alice's and bob's real approvals written the same way do pay (once)", async () => {
    const db = context.db();
    const { graph, ledger } = await insiderGraph(db, { route: 'dual_approval' });
    const pending = await suspendedOn(graph, 't-row-harness');
    await writeApproved(db, pending.approvalId, [
      record(signAs(pending, 'alice'), 'alice', 'dec_a'),
      record(signAs(pending, 'bob'), 'bob', 'dec_b'),
    ]);
    await graph.invoke(new Command({ resume: RECHECK }), config('t-row-harness'));
    expect(ledger.transfers).toHaveLength(1);
  });

  it('two decisions by alice with her two registered keys (fresh nonces each) do not make a dual approval', async () => {
    const db = context.db();
    const { graph, ledger, approvals } = await insiderGraph(db, { route: 'dual_approval' });
    await approvals.directory.addKey('alice', ed.getPublicKey(testKey('alice-laptop')));
    const pending = await suspendedOn(graph, 't-two-keys');
    const first = signAs(pending, 'alice');
    const second = signAs(pending, 'alice-laptop', 'approve', { approver: 'alice' });
    await writeApproved(db, pending.approvalId, [
      record(first, 'alice', 'dec_a'),
      record(second, 'alice-laptop', 'dec_b'),
    ]);
    await graph.invoke(new Command({ resume: RECHECK }), config('t-two-keys'));
    expect(ledger.transfers).toHaveLength(0);
  });

  it("alice's and bob's real approvals of the same transfer in another thread do not count here", async () => {
    const db = context.db();
    const { graph, ledger } = await insiderGraph(db, { route: 'dual_approval' });
    const source = await suspendedOn(graph, 't-replay-from');
    const target = await suspendedOn(graph, 't-replay-to');
    await writeApproved(db, target.approvalId, [
      record(signAs(source, 'alice'), 'alice', 'dec_a'),
      record(signAs(source, 'bob'), 'bob', 'dec_b'),
    ]);
    await graph.invoke(new Command({ resume: RECHECK }), config('t-replay-to'));
    expect(ledger.transfers).toHaveLength(0);
  });

  it("alice's revoked key cannot be enrolled again under bob (one key, one approver, revoked or not)", async () => {
    const db = context.db();
    const { approvals } = await insiderGraph(db, { route: 'dual_approval' });
    const alicePublic = ed.getPublicKey(testKey('alice'));
    const revoked = (await approvals.directory.get('alice'))!.keys[0]!;
    await approvals.directory.revoke('alice', { keyId: revoked.keyId });
    const moved = await approvals.directory.addKey('bob', alicePublic).catch((error) => error);
    expect(moved).toMatchObject({ code: 'identity_ambiguous' });
    expect((await approvals.directory.findByKey(revoked.keyId))?.approver.id).toBe('alice');
  });

  it("bob's real approval copied under carol's name (and carol's key id) counts nothing", async () => {
    const db = context.db();
    const { graph, ledger } = await insiderGraph(db, { route: 'dual_approval' });
    const pending = await suspendedOn(graph, 't-renamed');
    const bob = signAs(pending, 'bob');
    const carol = signAs(pending, 'carol');
    const renamed = {
      ...record(bob, 'bob', 'dec_b'),
      approver: 'carol',
      signed: { ...record(bob, 'bob', 'dec_b').signed, keyId: carol.keyId },
    };
    await writeApproved(db, pending.approvalId, [
      record(signAs(pending, 'alice'), 'alice', 'dec_a'),
      renamed,
    ]);
    await graph.invoke(new Command({ resume: RECHECK }), config('t-renamed'));
    expect(ledger.transfers).toHaveLength(0);
  });
});

describe('a re-sealed bundle cannot count an admin and her invited key as two people', () => {
  it("replaces bob's approval with one by alice-ops, whose key alice's invitation enrolled (sponsor alice): the dual approval does not hold", async () => {
    const { events, threadId } = await paidThread('t-sponsored-offline');
    const requested = events.find((event) => event.type === 'approval_requested')!;
    const request = {
      approvalId: String(requested.payload.approvalId),
      proposalHash: String(requested.payload.proposalHash),
    };
    const puppet = signAs(request, 'alice-ops');
    const forged = rewriteEvents(events, (list) =>
      list.map((event) => {
        if (event.type === 'approval_decided' && event.payload.approver === 'bob') {
          event.payload.approver = 'alice-ops';
          event.payload.signed = {
            statement: puppet.statement,
            keyId: puppet.keyId,
            signature: puppet.signature,
            publicKey: Buffer.from(ed.getPublicKey(testKey('alice-ops'))).toString('base64'),
          };
        }
        return event;
      }),
    );
    const approvers = trustedApprovers(['alice', 'bob', 'alice-ops']).map((approver) =>
      approver.id === 'alice-ops'
        ? { ...approver, keys: approver.keys.map((key) => ({ ...key, sponsor: 'alice' })) }
        : approver,
    );
    const result = verifyResealed(threadId, forged, approvers);
    expect(result.decisions.find((check) => check.approver === 'alice-ops')?.sponsor).toBe('alice');
    expect(result.valid).toBe(false);
  });
});
