import { Command } from '@langchain/langgraph';
import { expect, it } from 'vitest';
import type { ApprovalManager, ApprovalPack } from '../../src/approvals/index.js';
import { RECHECK } from '../../src/nodes/index.js';
import { signAs } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';
import { insiderGraph, suspendedOn } from '../support/insider-graph.js';

/**
 * Adversary: an insider with psql write access to `veridex_approvals` (no approver key, no
 * directory key), helped only by an honest approver who decides what the inbox shows as
 * pending.
 *
 * Guarantee under attack (README "Approvals": `policy_pack` is "tiers with their approvers and
 * timeouts, then auto-deny"; `approval_expired` is "enforced at decision, at resume and by
 * sweep()"; "Execution is gated by proof, not by a status … The tiers … come from the running
 * configuration … never from the row"; Security, insider row: "a rejection recorded in the audit
 * log stays final if the row is reopened"). The proof bounds a decision's signed time from below
 * (a tier counts only once open, from the later of the row's `created_at` and the hash-chained
 * `approval_requested` event) but never from above.
 *
 * Steps (test 1): an escalation chain gives alice (tier "lead") 1.5 seconds, then bob (tier
 * "cfo"). After alice's tier closed, the insider moves the row's `expires_at` an hour ahead
 * (tier_index still 0). Alice, shown the request as hers, approves: `applyDecision` judges by
 * the row's deadline and records it at tier 0; `prove` sees a signature made after tier 0
 * opened, by an approver allowed there, and the transfer runs — decided by the tier the policy
 * had already passed to the CFO. (Test 2): a one-tier chain expires and `sweep()` records the
 * `approval_resolved` expired event in the hash-chained log; the insider sets the row back to
 * pending with a new deadline; alice approves and the auto-denied transfer runs.
 *
 * Severity: medium (an insider decides who may approve — the approver of a closed tier instead
 * of the escalation's — and revives an auto-denied call; a real approver still signs).
 *
 * Suggested fix (mechanism): in `proveQuorum`/`recordProblem` also bound each decision from
 * above: count it at tier i only if its signed time is before the tier closes, i.e. before the
 * opening (the later of `created_at` and the logged `approval_requested`) plus the timeouts of
 * tiers 0..i from the running configuration (with at most the decide-time skew); and treat an
 * `approval_resolved` expired event in the thread's log as final, as a logged rejection is.
 */
const config = (threadId: string) => ({ configurable: { thread_id: threadId } });
const HOUR = 60 * 60 * 1000;
const TIER_MS = 1500;

const leadThenCfo: Record<string, ApprovalPack> = {
  escalation: {
    tiers: [
      { name: 'lead', approvers: ['alice'], requiredApprovals: 1, timeoutMs: TIER_MS },
      { name: 'cfo', approvers: ['bob'], requiredApprovals: 1, timeoutMs: HOUR },
    ],
  },
};

const leadOnly: Record<string, ApprovalPack> = {
  escalation: {
    tiers: [{ name: 'lead', approvers: ['alice'], requiredApprovals: 1, timeoutMs: TIER_MS }],
  },
};

const pastDeadline = () => new Promise((resolve) => setTimeout(resolve, TIER_MS + 700));

async function tryDecide(approvals: ApprovalManager, id: string, input: unknown) {
  try {
    return (await approvals.decide(id, input as never)).status;
  } catch (error) {
    return (error as { code?: string }).code;
  }
}

describeEachDatabase('an insider who moves a deadline forward', (context) => {
  it("keeps alice's closed tier open by moving expires_at an hour ahead: alice's late approval does not pay a transfer that escalated to the CFO", async () => {
    const db = context.db();
    // The proof lets a signed time run ahead of the server's by the manager's skew allowance (a
    // decision made just before its tier closed, on a clock a little fast): an insider holds a
    // tier open at most that long. Here 300 ms; the late approval comes ≥ 700 ms after closing.
    const { graph, ledger, approvals } = await insiderGraph(db, {
      route: 'policy_pack',
      packs: leadThenCfo,
      maxClockSkewMs: 300,
    });
    const pending = await suspendedOn(graph, 't-tier-kept-open');
    await pastDeadline();
    await db.query(
      `UPDATE veridex_approvals SET tier_index = 0, expires_at = now() + interval '1 hour' WHERE id = $1`,
      [pending.approvalId],
    );
    expect(await tryDecide(approvals, pending.approvalId, signAs(pending, 'alice'))).toBe(
      'approved',
    );
    await graph.invoke(new Command({ resume: RECHECK }), config('t-tier-kept-open'));
    expect(ledger.transfers).toHaveLength(0);
  });

  it('reopens a request that expired (auto-deny, logged by sweep) with a new deadline: a later approval does not pay it', async () => {
    const db = context.db();
    const { graph, ledger, approvals, audit } = await insiderGraph(db, {
      route: 'policy_pack',
      packs: leadOnly,
    });
    const pending = await suspendedOn(graph, 't-expired-revived');
    await pastDeadline();
    await approvals.sweep();
    expect((await approvals.require(pending.approvalId)).status).toBe('expired');
    const logged = await audit.events('t-expired-revived');
    expect(
      logged.some(
        (event) => event.type === 'approval_resolved' && event.payload.status === 'expired',
      ),
    ).toBe(true);
    await db.query(
      `UPDATE veridex_approvals SET status = 'pending', decided_at = NULL, expires_at = now() + interval '1 hour' WHERE id = $1`,
      [pending.approvalId],
    );
    await tryDecide(approvals, pending.approvalId, signAs(pending, 'alice'));
    await graph.invoke(new Command({ resume: RECHECK }), config('t-expired-revived'));
    expect(ledger.transfers).toHaveLength(0);
  });

  it("control: without the insider, alice's approval after her tier closed is refused (the request escalated to bob)", async () => {
    const db = context.db();
    const { graph, ledger, approvals } = await insiderGraph(db, {
      route: 'policy_pack',
      packs: leadThenCfo,
    });
    const pending = await suspendedOn(graph, 't-tier-honest');
    await pastDeadline();
    expect(await tryDecide(approvals, pending.approvalId, signAs(pending, 'alice'))).toBe(
      'approver_not_allowed',
    );
    await graph.invoke(new Command({ resume: RECHECK }), config('t-tier-honest'));
    expect(ledger.transfers).toHaveLength(0);
  });
});
