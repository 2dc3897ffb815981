// Add governance to a LangGraph you already have: swap ToolNode for governedToolNode.
// Runs offline (scripted model, in-memory stores); set OPENAI_API_KEY to use ChatOpenAI.
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { type AIMessage, HumanMessage } from '@langchain/core/messages';
import {
  Command,
  END,
  MemorySaver,
  MessagesAnnotation,
  START,
  StateGraph,
} from '@langchain/langgraph';
import { ApprovalManager } from '@veridex/langgraph/approvals';
import { AuditLog, generateKeyPair } from '@veridex/langgraph/audit';
import { signDecision } from '@veridex/langgraph/identity';
import {
  type ApprovalsInterrupt,
  governedToolNode,
  routeAfterTools,
} from '@veridex/langgraph/nodes';
import { PolicyEngine, rules } from '@veridex/langgraph/policy';
import { scriptedModel } from '@veridex/langgraph/testing';
import { tool } from '@veridex/langgraph/tools';
import { z } from 'zod';

const refund = tool({
  name: 'refund',
  description: 'Refund a customer order.',
  safetyClass: 'financial',
  idempotency: 'required',
  input: z.object({ orderId: z.string(), amount: z.string() }),
  output: z.object({ refundId: z.string() }),
  async execute({ input, idempotencyKey }) {
    console.log(
      `  → refunding ${input.amount} on ${input.orderId} (idempotency key ${idempotencyKey.slice(0, 18)}…)`,
    );
    return { refundId: `rf_${input.orderId}` };
  },
});

// The approver's key pair (in production: `veridex approvers keygen`, the private key stays
// with the approver). Only decisions signed by a registered key count.
const lead = generateKeyPair();
const audit = new AuditLog();
const tools = governedToolNode({
  tools: [refund],
  audit,
  approvals: new ApprovalManager({
    audit,
    approvers: [{ id: 'support-lead', publicKeys: [lead.publicKey] }],
  }),
  policy: new PolicyEngine({
    audit,
    rules: [
      rules.argumentThreshold({ argument: 'amount', atLeast: '500', route: 'dual_approval' }),
    ],
  }),
});

const model: BaseChatModel = process.env.OPENAI_API_KEY
  ? new (await import('@langchain/openai')).ChatOpenAI({ model: 'gpt-4o-mini' })
  : scriptedModel([
      { toolCalls: [{ name: 'refund', args: { orderId: 'A-1001', amount: '120.00' } }] },
      'Refunded 120.00 on A-1001.',
    ]);
const bound = model.bindTools!(tools.tools);

const graph = new StateGraph(MessagesAnnotation)
  .addNode('model', async (state) => ({ messages: [await bound.invoke(state.messages)] }))
  .addNode('tools', tools)
  .addEdge(START, 'model')
  .addConditionalEdges('model', (state) =>
    (state.messages.at(-1) as AIMessage).tool_calls?.length ? 'tools' : END,
  )
  .addConditionalEdges('tools', routeAfterTools('model'), ['model', END])
  .compile({ checkpointer: new MemorySaver() });

const config = { configurable: { thread_id: 'order-A-1001' } };
const suspended = await graph.invoke(
  { messages: [new HumanMessage('Refund 120.00 on order A-1001')] },
  config,
);
const [pending] = pendingApprovals(suspended).approvals;
console.log(
  `suspended: ${pending?.tool} needs ${pending?.route} (${pending?.reason}), approval ${pending?.approvalId}`,
);

const decision = signDecision(
  { request: pending!, decision: 'approve', approver: 'support-lead' },
  lead.privateKey,
);
const done = await graph.invoke(new Command({ resume: decision }), config);
console.log(`completed: ${done.messages.at(-1)?.content}`);
console.log(
  `audit chain: ${(await audit.verify('order-A-1001')).valid ? 'intact' : 'BROKEN'}, ${(await audit.events('order-A-1001')).length} events`,
);

/** The approvals a suspended invocation is waiting for (`result.__interrupt__[0].value`). */
function pendingApprovals(result: object): ApprovalsInterrupt {
  const [pending] = (result as { __interrupt__?: Array<{ value: unknown }> }).__interrupt__ ?? [];
  if (!pending) throw new Error('expected the graph to be suspended on approvals');
  return pending.value as ApprovalsInterrupt;
}
