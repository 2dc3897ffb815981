// Move a suspended payout to another database as a portable veridex.run/v1 file, and finish it
// there: two approvals, one payment, and an export of the imported run equal to the original.
// Offline: two in-memory PGlite databases, a scripted model, the kit's payment-rail double.
// The command line does the same: `veridex runs export <thread> --out run.json` and
// `veridex runs import run.json --graph ./app.ts#graph`.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AIMessage, HumanMessage } from '@langchain/core/messages';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { exportThread, importThread } from '@veridex/langgraph/adapters';
import { ApprovalManager } from '@veridex/langgraph/approvals';
import {
  AuditLog,
  canonicalJson,
  generateKeyPair,
  HmacSigner,
  PostgresAuditStore,
} from '@veridex/langgraph/audit';
import { PostgresCheckpointer } from '@veridex/langgraph/checkpointer';
import { createDatabase, type Database, migrate } from '@veridex/langgraph/db';
import { signDecision } from '@veridex/langgraph/identity';
import {
  governedToolNode,
  pendingApprovalInterrupts,
  resumeThread,
  routeAfterTools,
} from '@veridex/langgraph/nodes';
import { PolicyEngine } from '@veridex/langgraph/policy';
import { scriptedModel } from '@veridex/langgraph/testing';
import { PostgresIdempotencyStore } from '@veridex/langgraph/tools';
import {
  createTreasuryKit,
  DatabasePaymentRail,
  NoopSanctionsScreener,
  PostgresCeilingStore,
  StaticBalanceProvider,
} from '@veridex/langgraph/treasury';

const KEYS = { 'alice@ops.example': generateKeyPair(), 'bob@ops.example': generateKeyPair() };

/** The application: the same graph code runs on the old and the new database. */
async function payoutApp(db: Database) {
  await migrate(db);
  const audit = new AuditLog({ store: new PostgresAuditStore(db) });
  // The approvers and their public keys, the same on both machines.
  const approvals = new ApprovalManager({
    db,
    audit,
    approvers: Object.entries(KEYS).map(([id, pair]) => ({ id, publicKeys: [pair.publicKey] })),
  });
  const rail = await new DatabasePaymentRail(db).install();
  const kit = createTreasuryKit({
    appId: 'ops-suite-01',
    agentId: 'payout-bot',
    audit,
    approvals,
    balance: { provider: new StaticBalanceProvider({ USD: '1000000.00' }) },
    transfer: { executor: rail },
    idempotency: new PostgresIdempotencyStore(db),
    ceilings: new PostgresCeilingStore(db),
    sanctions: new NoopSanctionsScreener(),
    evidenceSigner: new HmacSigner('example-evidence-secret-0123456789'),
    policy: { dualApprovalThreshold: { USD: '10000.00' } },
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
    .addNode(
      'tools',
      governedToolNode({
        tools: kit.tools,
        policy: new PolicyEngine({ audit, rules: kit.policyRules }),
        approvals,
        audit,
        idempotency: kit.idempotency,
        agentId: kit.agentId,
      }),
    )
    .addNode('evidence', kit.nodes.evidence)
    .addEdge(START, 'model')
    .addConditionalEdges('model', (s) =>
      (s.messages.at(-1) as AIMessage).tool_calls?.length ? 'tools' : 'evidence',
    )
    .addConditionalEdges('tools', routeAfterTools('model'), ['model', END])
    .addEdge('evidence', END)
    .compile({ checkpointer: PostgresCheckpointer.fromDatabase(db) });
  return { graph, payments: async () => (await rail.executions()).length };
}

const thread = 'invoice-1234';
const oldDb = await createDatabase({ dataDir: 'memory://' });
const before = await payoutApp(oldDb);
await before.graph.invoke(
  { messages: [new HumanMessage('Pay $50,000 to Acme Suppliers')] },
  { configurable: { thread_id: thread } },
);

// Export: canonical JSON (RFC 8785), so the same run always gives the same bytes.
const file = join(mkdtempSync(join(tmpdir(), 'veridex-run-')), 'run.json');
writeFileSync(file, canonicalJson(await exportThread(before.graph, thread)), { mode: 0o600 });
const run = JSON.parse(readFileSync(file, 'utf8'));
console.log(
  `exported ${run.messages.length} messages, waiting on ${run.pending.next} for ${run.pending.approvals[0].id}`,
);

// Import into a fresh database: checked, chain continued, approvals re-derived by its policy.
const newDb = await createDatabase({ dataDir: 'memory://' });
const after = await payoutApp(newDb);
const imported = await importThread(after.graph, run);
console.log(
  `imported: ${imported.auditEvents} audit events, approval ${imported.approvals[0]?.status}`,
);
if (canonicalJson(await exportThread(after.graph, thread)) !== readFileSync(file, 'utf8')) {
  throw new Error('an imported run must export byte for byte as it was exported');
}

// The imported run raises its approval again on the new machine; each approver signs it.
for (const [approver, pair] of Object.entries(KEYS)) {
  let [waiting] = await pendingApprovalInterrupts(after.graph, thread);
  if (!waiting) {
    await resumeThread(after.graph, thread);
    [waiting] = await pendingApprovalInterrupts(after.graph, thread);
  }
  const request = waiting!.value.approvals[0]!;
  const decision = signDecision({ request, decision: 'approve', approver }, pair.privateKey);
  await resumeThread(after.graph, thread, decision);
}
console.log(
  `payments: ${await before.payments()} before the move, ${await after.payments()} after it`,
);
if ((await after.payments()) !== 1 || (await before.payments()) !== 0)
  throw new Error('expected exactly one payment');
await oldDb.close();
await newDb.close();
