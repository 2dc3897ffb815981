// Add governance to a LangChain v1 `createAgent` agent with one middleware.
// Runs offline (scripted model, in-memory stores); set OPENAI_API_KEY to use ChatOpenAI.
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { Command, MemorySaver } from '@langchain/langgraph';
import { ApprovalManager } from '@veridex/langgraph/approvals';
import { AuditLog, Ed25519Signer, generateKeyPair, verifyEvidence } from '@veridex/langgraph/audit';
import type { ApprovalsInterrupt } from '@veridex/langgraph/governance';
import { signDecision } from '@veridex/langgraph/identity';
import { governanceMiddleware } from '@veridex/langgraph/middleware';
import { PolicyEngine, rules } from '@veridex/langgraph/policy';
import { scriptedModel } from '@veridex/langgraph/testing';
import { tool } from '@veridex/langgraph/tools';
import { createAgent, tool as langchainTool } from 'langchain';
import { z } from 'zod';

// A plain LangChain tool, as the agent already has it: governed too, classified by name.
const lookupOrder = langchainTool(
  async ({ orderId }: { orderId: string }) => `Order ${orderId}: 2 items, paid 120.00 USD.`,
  {
    name: 'lookup_order',
    description: 'Look up an order.',
    schema: z.object({ orderId: z.string() }),
  },
);

// A governed tool the middleware brings: financial, so a person approves every call.
const refund = tool({
  name: 'refund',
  description: 'Refund a customer order.',
  safetyClass: 'financial',
  idempotency: 'required',
  input: z.object({ orderId: z.string(), amount: z.string() }),
  output: z.object({ refundId: z.string() }),
  async execute({ input, idempotencyKey }) {
    console.log(
      `  → refunding ${input.amount} on ${input.orderId} (${idempotencyKey.slice(0, 18)}…)`,
    );
    return { refundId: `rf_${input.orderId}` };
  },
});

const lead = generateKeyPair(); // the approver's key (in production: `veridex approvers keygen`)
const signer = new Ed25519Signer(generateKeyPair().privateKey); // the agent's evidence key
const audit = new AuditLog();
const approvals = new ApprovalManager({
  audit,
  approvers: [{ id: 'support-lead', publicKeys: [lead.publicKey] }],
});
const governance = governanceMiddleware({
  tools: [refund],
  safetyClasses: { lookup_order: 'read' },
  audit,
  approvals,
  // Refunds from 1,000 need two people (below, the financial class asks one).
  policy: new PolicyEngine({
    audit,
    rules: [
      rules.argumentThreshold({
        tools: ['refund'],
        argument: 'amount',
        atLeast: '1000',
        route: 'dual_approval',
      }),
    ],
  }),
  budget: { maxToolCalls: 10 },
  evidence: { signers: [signer], subject: { agent: 'support-bot' } },
});

const model: BaseChatModel = process.env.OPENAI_API_KEY
  ? new (await import('@langchain/openai')).ChatOpenAI({ model: 'gpt-4o-mini' })
  : scriptedModel([
      { toolCalls: [{ name: 'lookup_order', args: { orderId: 'A-1001' } }] },
      { toolCalls: [{ name: 'refund', args: { orderId: 'A-1001', amount: '120.00' } }] },
      'Refunded 120.00 USD on order A-1001.',
    ]);
const agent = createAgent({
  model,
  tools: [lookupOrder],
  systemPrompt: 'You help customers with orders and refunds.',
  checkpointer: new MemorySaver(),
  middleware: [governance],
});

const config = { configurable: { thread_id: 'support-1' } };
const first = await agent.invoke(
  { messages: [{ role: 'user', content: 'Please refund order A-1001.' }] },
  config,
);
// Suspended before the refund ran, in the shape LangChain's HITL clients render.
const value = first.__interrupt__?.[0]?.value as ApprovalsInterrupt;
const [action] = value.actionRequests;
console.log(`Waiting for approval: ${action?.description}`);
console.log(
  `  approval ${action?.approvalId}, quorum ${action?.quorum.approved}/${action?.quorum.required}`,
);

// The lead signs; LangChain's { decisions: [...] } form carries the signed decision.
const decision = signDecision(
  { request: value.approvals[0]!, decision: 'approve', approver: 'support-lead' },
  lead.privateKey,
);
const done = await agent.invoke(
  new Command({ resume: { decisions: [{ type: 'approve', ...decision }] } }),
  config,
);
console.log(`Agent: ${done.messages.at(-1)?.text}`);

const sealed = governance.evidence('support-1');
// The auditor checks the approvals against the approvers they trust (`veridex approvers export`).
const check = verifyEvidence(JSON.parse(JSON.stringify(sealed?.bundle)), {
  keys: [signer.verifier()],
  approvers: await approvals.directory.list(),
});
console.log(
  `Evidence: ${sealed?.events} events, ${check.valid ? 'verified' : `INVALID: ${check.reasons.join('; ')}`}`,
);
if (!check.valid || !done.messages.at(-1)?.text.startsWith('Refunded')) process.exit(1);
