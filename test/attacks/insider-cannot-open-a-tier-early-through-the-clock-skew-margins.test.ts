import { Command } from '@langchain/langgraph';
import { expect, it } from 'vitest';
import type { ApprovalPack } from '../../src/approvals/index.js';
import { RECHECK } from '../../src/nodes/index.js';
import { signAs } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';
import { insiderGraph, suspendedOn } from '../support/insider-graph.js';

/**
 * Adversary: an insider with psql write access to veridex_approvals, and one approver (alice, of
 * ops) whose statement is dated a few minutes ahead — a fast clock, or on purpose. No other key.
 *
 * Guarantee under attack (README "Security", insider row: a decision counts "at a tier that was
 * open when signed"; prove-approval.ts: "an escalation chain's later tier never decides early").
 * The proof judges the tier by the statement's SIGNED time with the skew margin on its side
 * (`signedAt >= opensAt - maxClockSkewMs`), and `decide` already accepted a signed time up to
 * `maxClockSkewMs` in the future. The two margins add up: a decision made the minute the request
 * opened, dated +4.5 minutes, passes for a tier that opens 8 minutes later, once the insider
 * relabels its tier in the row (the hash-chained approval_decided event still says tier 0).
 * The test asserts the SECURE outcome (fails today).
 */
const config = (threadId: string) => ({ configurable: { thread_id: threadId } });
const MINUTE = 60_000;

// Tier 0: two of ops for 8 minutes; tier 1 (after 8 minutes): any one of ops or directors.
const packs: Record<string, ApprovalPack> = {
  escalation: {
    tiers: [
      { name: 'ops-pair', approvers: ['role:ops'], requiredApprovals: 2, timeoutMs: 8 * MINUTE },
      {
        name: 'after-hours',
        approvers: ['role:ops', 'role:director'],
        requiredApprovals: 1,
        timeoutMs: 60 * MINUTE,
      },
    ],
  },
};

describeEachDatabase('an insider who relabels a future-dated decision', (context) => {
  it('alice approves at once with a statement dated 4.5 minutes ahead; the insider moves it to tier 1: one approval does not pass a tier that needs two for 8 minutes', async () => {
    const db = context.db();
    const { graph, ledger, approvals } = await insiderGraph(db, {
      route: 'policy_pack',
      packs,
      roles: { alice: ['ops'], bob: ['ops'] },
    });
    const pending = await suspendedOn(graph, 't-skew-tier');
    const ahead = new Date(Date.now() + 4.5 * MINUTE);
    const after = await approvals.decide(
      pending.approvalId,
      signAs(pending, 'alice', 'approve', { decidedAt: ahead }),
    );
    expect(after.status).toBe('pending'); // one of two at tier 0, as configured
    const { rows } = await db.query<{ decisions: unknown }>(
      `SELECT decisions FROM veridex_approvals WHERE id = $1`,
      [pending.approvalId],
    );
    const raw = rows[0]!.decisions;
    const decisions = (
      (typeof raw === 'string' ? JSON.parse(raw) : raw) as Array<Record<string, unknown>>
    ).map((decision) => ({ ...decision, tier: 1 }));
    await db.query(
      `UPDATE veridex_approvals SET status = 'approved', tier_index = 1, decisions = $2 WHERE id = $1`,
      [pending.approvalId, JSON.stringify(decisions)],
    );
    await graph.invoke(new Command({ resume: RECHECK }), config('t-skew-tier'));
    expect(ledger.transfers).toHaveLength(0);
  });
});
