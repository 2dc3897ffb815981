// Adversary: none needed — an operator configures a createAgent tool by its own, exact name.
// The middleware governed a plain tool under a normalised name (`crm.refund` → `crm_refund`,
// `_refund` → `refund`, `__proto__` → `proto`) while policy rules and `review` named it by its
// own: `rules.requireApproval` and `rules.denyTools` never matched (it ran with no approval)
// and its `review` entry was ignored. Such a name is now refused when the tool is governed
// (`config_invalid`, before the model runs), so no rule can name a tool its calls do not carry.
import { tool as langchainTool } from '@langchain/core/tools';
import { MemorySaver } from '@langchain/langgraph';
import { createAgent } from 'langchain';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApprovalManager } from '../../src/approvals/index.js';
import { AuditLog } from '../../src/audit/index.js';
import { governanceMiddleware } from '../../src/middleware/index.js';
import { PolicyEngine, type PolicyRule, rules } from '../../src/policy/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { TEST_APPROVERS, testApproverInits } from '../support/approvers.js';
import { type HitlAgent, newThread, user } from '../support/hitl-agent.js';

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
  const model = scriptedModel([{ toolCalls: [{ id: 'q1', name, args: { order: 'A-1' } }] }, 'ok'], {
    whenExhausted: 'repeat-last',
  });
  const agent = createAgent({
    model,
    tools: [refund],
    middleware: [governance] as never,
    checkpointer: new MemorySaver(),
  }) as unknown as HitlAgent;
  return { agent, ran, model };
}

describe('a createAgent tool whose name the middleware would have to rewrite', () => {
  for (const name of NAMES) {
    const configurations: Array<[string, Parameters<typeof agentWith>]> = [
      ['rules.requireApproval', [name, () => [rules.requireApproval({ tools: [name] })]]],
      ['rules.denyTools', [name, () => [rules.denyTools([name])]]],
      [
        'a review entry',
        [name, () => [], { allowedDecisions: ['approve', 'reject'] }, 'financial'],
      ],
    ];
    for (const [what, args] of configurations) {
      it(`${JSON.stringify(name)} named by ${what}: refused before the model runs, and never run`, async () => {
        const { agent, ran, model } = agentWith(...args);
        const error = await agent.invoke(user('refund A-1'), newThread()).catch((e: unknown) => e);
        // LangChain wraps what a middleware hook throws; ours is the cause.
        expect((error as { cause?: unknown }).cause ?? error).toMatchObject({
          code: 'config_invalid',
          message: expect.stringContaining('rename it'),
        });
        expect(ran, 'the tool ran').toEqual([]);
        expect(model.calls, 'the model ran').toHaveLength(0);
      });
    }
  }
});
