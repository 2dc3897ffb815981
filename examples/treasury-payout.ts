// The treasury kit in your own StateGraph: a $50,000 payout that needs two approvers.
// Offline: PGlite in memory, a scripted model, and the kit's payment-rail and balance doubles.
import { type AIMessage, HumanMessage } from '@langchain/core/messages';
import { Command, END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ApprovalManager } from '@veridex/langgraph/approvals';
import {
  AuditLog,
  Ed25519Signer,
  generateKeyPair,
  PostgresAuditStore,
} from '@veridex/langgraph/audit';
import { PostgresCheckpointer } from '@veridex/langgraph/checkpointer';
import { createDatabase, migrate } from '@veridex/langgraph/db';
import { signDecision } from '@veridex/langgraph/identity';
import {
  type ApprovalsInterrupt,
  governedToolNode,
  routeAfterTools,
} from '@veridex/langgraph/nodes';
import { PolicyEngine } from '@veridex/langgraph/policy';
import { scriptedModel } from '@veridex/langgraph/testing';
import { PostgresIdempotencyStore } from '@veridex/langgraph/tools';
import {
  createTreasuryKit,
  DatabasePaymentRail,
  formatMoney,
  NoopSanctionsScreener,
  PostgresCeilingStore,
  StaticBalanceProvider,
} from '@veridex/langgraph/treasury';

const db = await createDatabase({ dataDir: 'memory://' }); // or { url: process.env.DATABASE_URL }
await migrate(db);
const audit = new AuditLog({ store: new PostgresAuditStore(db) });
// Approvers and their public keys (in production: `veridex approvers keygen` and `add`).
const keys = { 'alice@ops.example': generateKeyPair(), 'bob@ops.example': generateKeyPair() };
const approvals = new ApprovalManager({
  db,
  audit,
  approvers: Object.entries(keys).map(([id, pair]) => ({ id, publicKeys: [pair.publicKey] })),
});
const kit = createTreasuryKit({
  appId: 'ops-suite-01',
  agentId: 'payout-bot',
  audit,
  approvals,
  balance: { provider: new StaticBalanceProvider({ USD: '1000000.00' }) },
  transfer: { executor: await new DatabasePaymentRail(db).install() },
  idempotency: new PostgresIdempotencyStore(db),
  ceilings: new PostgresCeilingStore(db),
  sanctions: new NoopSanctionsScreener(),
  evidenceSigner: new Ed25519Signer(generateKeyPair().privateKey),
  policy: { dualApprovalThreshold: { USD: '10000.00' }, dailyLimit: { USD: '250000.00' } },
});
const tools = governedToolNode({
  tools: kit.tools,
  policy: new PolicyEngine({ audit, rules: kit.policyRules }),
  approvals,
  audit,
  idempotency: kit.idempotency,
  agentId: kit.agentId,
});
const model = scriptedModel([
  {
    toolCalls: [
      {
        name: 'transfer',
        args: {
          to: '0x90F8bf9A1C437435f3065A5A90310243E197c3b2',
          amount: '50000.00',
          currency: 'USD',
        },
      },
    ],
  },
  'Paid.',
]);

const graph = new StateGraph(MessagesAnnotation)
  .addNode('model', async (state) => ({ messages: [await model.invoke(state.messages)] }))
  .addNode('tools', tools)
  .addNode('evidence', kit.nodes.evidence)
  .addEdge(START, 'model')
  .addConditionalEdges('model', (s) =>
    (s.messages.at(-1) as AIMessage).tool_calls?.length ? 'tools' : 'evidence',
  )
  .addConditionalEdges('tools', routeAfterTools('model'), ['model', END])
  .addEdge('evidence', END)
  .compile({ checkpointer: PostgresCheckpointer.fromDatabase(db) });

const config = { configurable: { thread_id: 'invoice-1234' } };
const first = await graph.invoke(
  { messages: [new HumanMessage('Pay $50,000 to Acme Suppliers')] },
  config,
);
const request = pendingApprovals(first).approvals[0]!;
console.log(`suspended for ${request.route}: ${request.approvalId}`);
for (const [approver, pair] of Object.entries(keys)) {
  const decision = signDecision({ request, decision: 'approve', approver }, pair.privateKey);
  await graph.invoke(new Command({ resume: decision }), config);
}
console.log(
  `spent today: ${formatMoney((await kit.ceilings.usage('USD')).committed)} USD; evidence: ${(await audit.events('invoice-1234')).length} events`,
);
await db.close();

/** The approvals a suspended invocation is waiting for (`result.__interrupt__[0].value`). */
function pendingApprovals(result: object): ApprovalsInterrupt {
  const [pending] = (result as { __interrupt__?: Array<{ value: unknown }> }).__interrupt__ ?? [];
  if (!pending) throw new Error('expected the graph to be suspended on approvals');
  return pending.value as ApprovalsInterrupt;
}
