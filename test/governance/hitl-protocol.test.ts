import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApprovalManager } from '../../src/approvals/index.js';
import { AuditLog } from '../../src/audit/index.js';
import {
  fromHitlResponse,
  hitlRequestOf,
  isHitlResponse,
  type PendingPlan,
} from '../../src/governance/index.js';
import { buildToolProposal } from '../../src/policy/index.js';
import { tool } from '../../src/tools/index.js';
import { signAs, testApproverInits } from '../support/approvers.js';

const pay = tool({
  name: 'pay',
  description: 'Pay.',
  safetyClass: 'financial',
  input: z.object({ to: z.string() }),
  output: z.object({ ok: z.boolean() }),
  execute: async () => ({ ok: true }),
});

/** Two pending approvals of one turn, as the planner holds them. */
async function pendingPlans(): Promise<PendingPlan[]> {
  const audit = new AuditLog();
  const approvals = new ApprovalManager({ audit, approvers: testApproverInits(['alice']) });
  return Promise.all(
    ['acme', 'globex'].map(async (to, index) => {
      const call = { id: `call_${index}`, name: 'pay', args: { to }, type: 'tool_call' as const };
      const proposal = buildToolProposal({
        tool: pay,
        arguments: { to },
        threadId: 't-hitl',
        runId: 't-hitl',
        toolCallId: call.id,
        proposer: 'agent',
      });
      const decision = {
        verdict: 'escalate',
        route: 'human_required',
        ruleId: 'safety_class.financial',
        ruleName: 'Financial tools need a human',
        reason: 'financial',
        evaluations: [],
      } as const;
      const request = await approvals.request(proposal, decision);
      const input = call.args;
      return {
        kind: 'pending',
        call,
        tool: pay,
        proposal,
        input,
        request,
        revision: 0,
        decision,
        editors: [],
      } as PendingPlan;
    }),
  );
}

describe('the HITL protocol of approvals', () => {
  it('lists one action request and review config per pending approval, in order', async () => {
    const plans = await pendingPlans();
    const { actionRequests, reviewConfigs } = hitlRequestOf(plans);
    expect(actionRequests.map((action) => [action.name, action.args, action.approvalId])).toEqual(
      plans.map((plan) => ['pay', plan.proposal.arguments, plan.request.id]),
    );
    expect(reviewConfigs.map((config) => config.actionName)).toEqual(['pay', 'pay']);
  });

  it('reads signed decisions wherever they stand, and bare ones by position', async () => {
    const plans = await pendingPlans();
    const signed = signAs(
      { id: plans[1]!.request.id, proposalHash: plans[1]!.request.proposalHash },
      'alice',
    );
    const entries = fromHitlResponse(
      {
        decisions: [
          { type: 'approve', ...signed },
          { type: 'reject', approver: 'bob', message: 'no' },
        ],
      },
      plans,
    );
    expect(entries[0]).toEqual(signed);
    expect(entries[1]).toEqual({
      approvalId: plans[1]!.request.id,
      decision: 'reject',
      approver: 'bob',
      reason: 'no',
    });
  });

  it('at an interrupt one of several a resume reaches, refuses bare decisions that name no approval and reads those that do by their id', async () => {
    const plans = await pendingPlans();
    const [unnamed, named] = fromHitlResponse(
      {
        decisions: [
          { type: 'approve', approver: 'alice' },
          { type: 'approve', approver: 'alice', approvalId: plans[1]!.request.id },
        ],
      },
      plans,
      false,
    );
    expect(unnamed).toEqual({ invalidDecision: expect.stringMatching(/names no approval/) });
    expect(named).toMatchObject({ approvalId: plans[1]!.request.id, decision: 'approve' });
  });

  it('refuses a bare decision naming an approval that is not the one at its position (a reordered list)', async () => {
    const plans = await pendingPlans();
    const entries = fromHitlResponse(
      {
        decisions: [
          { type: 'reject', approver: 'alice', approvalId: plans[1]!.request.id },
          { type: 'approve', approver: 'alice', approvalId: plans[0]!.request.id },
        ],
      },
      plans,
    );
    expect(entries).toEqual([
      { invalidDecision: expect.stringMatching(/not the approval at that position/) },
      { invalidDecision: expect.stringMatching(/not the approval at that position/) },
    ]);
  });

  it('refuses bare decisions whole when their count differs from the pending approvals (a stale client)', async () => {
    const plans = await pendingPlans();
    // The client saw one approval; two are pending. Position would approve the wrong call.
    const entries = fromHitlResponse(
      { decisions: [{ type: 'approve', approver: 'alice' }] },
      plans,
    );
    expect(entries).toEqual([{ invalidDecision: expect.stringMatching(/1 decisions for 2/) }]);
  });

  it('refuses a signed decision whose type contradicts what was signed, and edits that change the tool', async () => {
    const plans = await pendingPlans();
    const signed = signAs(
      { id: plans[0]!.request.id, proposalHash: plans[0]!.request.proposalHash },
      'alice',
      'reject',
    );
    const [contradicted, retargeted] = fromHitlResponse(
      {
        decisions: [
          { type: 'approve', ...signed },
          { type: 'edit', approver: 'alice', editedAction: { name: 'shell', args: { to: 'x' } } },
        ],
      },
      plans,
    );
    expect(contradicted).toEqual({ invalidDecision: expect.stringMatching(/does not match/) });
    expect(retargeted).toEqual({
      invalidDecision: expect.stringMatching(/cannot change which tool/),
    });
  });

  it('never throws on arbitrary resume payloads, and binds bare decisions only to pending ids', async () => {
    const plans = await pendingPlans();
    const ids = new Set(plans.map((plan) => plan.request.id));
    fc.assert(
      fc.property(fc.anything(), (value) => {
        const payload = { decisions: Array.isArray(value) ? value : [value] };
        if (!isHitlResponse(payload)) return;
        for (const entry of fromHitlResponse(payload, plans)) {
          const approvalId = (entry as { approvalId?: unknown }).approvalId;
          if (approvalId !== undefined) expect(ids.has(approvalId as string)).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });
});
