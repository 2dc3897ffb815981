// Adversary: none needed — an operator configures a createAgent tool by its own, exact name.
// The middleware governs a plain tool under a normalised name (`normalizeToolName`: characters
// outside [A-Za-z0-9_-] become `_`, leading and trailing `_` are dropped: `crm.refund` →
// `crm_refund`, `_refund` → `refund`, `__proto__` → `proto`). Policy rules see the proposal's
// (normalised) name and `review` is read by it, but the `review` key check accepts the tool's
// own name and rejects the normalised one. So for such a tool, `rules.requireApproval` and
// `rules.denyTools` by its real name never match (it runs with no approval), and its `review`
// entry is accepted and silently ignored (every decision allowed, default description).
import { tool as langchainTool } from '@langchain/core/tools';
import { Command, MemorySaver } from '@langchain/langgraph';
import { createAgent } from 'langchain';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApprovalManager } from '../../src/approvals/index.js';
import { AuditLog } from '../../src/audit/index.js';
import { governanceMiddleware } from '../../src/middleware/index.js';
import { PolicyEngine, type PolicyRule, rules } from '../../src/policy/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { signAs, TEST_APPROVERS, testApproverInits } from '../support/approvers.js';
import {
  type AgentResult,
  type HitlAgent,
  interruptsOf,
  newThread,
  user,
} from '../support/hitl-agent.js';

// Gemini accepts dots in function names; `_name` and `name_` are valid for every provider.
const NAMES = ['crm.refund', '_refund', 'refund_', '__proto__'];

function agentWith(
  name: string,
  policyRules: (audit: AuditLog) => PolicyRule[],
  review?: Record<string, unknown>,
  safetyClass: 'write' | 'financial' = 'write',
) {
  const ran: string[] = [];
  const audit = new AuditLog();
  const approvals = new ApprovalManager({
    audit,
    approvers: testApproverInits([...TEST_APPROVERS]),
  });
  const refund = langchainTool(
    async (args: { order: string }) => {
      ran.push(args.order);
      return 'refunded';
    },
    { name, description: 'Refunds an order.', schema: z.object({ order: z.string() }) },
  );
  // Own data properties, so that `__proto__` is a key like any other.
  const own = (value: unknown) =>
    Object.defineProperty({}, name, { value, enumerable: true, writable: true });
  const governance = governanceMiddleware({
    audit,
    approvals,
    safetyClasses: own(safetyClass) as never,
    policy: new PolicyEngine({ audit, rules: policyRules(audit) }),
    ...(review ? { review: own(review) as never } : {}),
  });
  const agent = createAgent({
    model: scriptedModel([{ toolCalls: [{ id: 'q1', name, args: { order: 'A-1' } }] }, 'ok'], {
      whenExhausted: 'repeat-last',
    }),
    tools: [refund],
    middleware: [governance] as never,
    checkpointer: new MemorySaver(),
  }) as unknown as HitlAgent;
  return { agent, ran, approvals };
}

describe('a createAgent tool whose name the middleware normalises', () => {
  for (const name of NAMES) {
    it(`rules.requireApproval({ tools: [${JSON.stringify(name)}] }) makes its calls wait`, async () => {
      const { agent, ran } = agentWith(name, () => [rules.requireApproval({ tools: [name] })]);
      const result = await agent.invoke(user('refund A-1'), newThread());
      expect(ran, 'the tool ran with no approval').toEqual([]);
      expect(interruptsOf(result)).toHaveLength(1);
    });

    it(`rules.denyTools([${JSON.stringify(name)}]) denies its calls`, async () => {
      const { agent, ran } = agentWith(name, () => [rules.denyTools([name])]);
      await agent.invoke(user('refund A-1'), newThread());
      expect(ran, 'a denied tool ran').toEqual([]);
    });

    it(`its review entry (by ${JSON.stringify(name)}) is applied: a decision it forbids is refused`, async () => {
      const { agent, ran, approvals } = agentWith(
        name,
        () => [],
        { allowedDecisions: ['approve', 'reject'], description: 'Check the order first.' },
        'financial',
      );
      const config = newThread();
      const first = interruptsOf(await agent.invoke(user('refund A-1'), config))[0]!;
      expect(first.reviewConfigs[0]?.allowedDecisions).toEqual(['approve', 'reject']);
      expect(first.actionRequests[0]?.description).toBe('Check the order first.');
      const approval = first.approvals[0]!;
      const edited: AgentResult = await agent.invoke(
        new Command({
          resume: [signAs(approval, 'alice', 'edit', { editedArgs: { order: 'Z-9' } })],
        }),
        config,
      );
      expect(interruptsOf(edited)[0]?.approvals[0]?.refusals.map((r) => r.code)).toEqual([
        'decision_not_allowed',
      ]);
      expect((await approvals.require(approval.approvalId)).status).toBe('pending');
      expect(ran).toEqual([]);
    });
  }
});
