// The treasury kit on its own (no graph, no server): the policy decides a $50,000 payout needs
// two approvers, runTool refuses to run it until two signed approvals exist, then the
// approved transfer runs through screening, balance check,
// ceilings and the executor exactly once, a sanctioned address is refused, and the thread's
// evidence bundle is sealed and verified offline.
import { ApprovalManager } from '@veridex/langgraph/approvals';
import {
  AuditLog,
  generateKeyPair,
  HmacSigner,
  PostgresAuditStore,
  verifyEvidence,
} from '@veridex/langgraph/audit';
import { createDatabase, migrate } from '@veridex/langgraph/db';
import { runTool } from '@veridex/langgraph/governance';
import { signDecision } from '@veridex/langgraph/identity';
import { buildToolProposal, PolicyEngine } from '@veridex/langgraph/policy';
import { PostgresIdempotencyStore } from '@veridex/langgraph/tools';
import {
  createTreasuryKit,
  formatMoney,
  ListSanctionsScreener,
  MemoryPaymentRail,
  PostgresCeilingStore,
  StaticBalanceProvider,
} from '@veridex/langgraph/treasury';

const db = await createDatabase({ dataDir: 'memory://' }); // or { url: process.env.DATABASE_URL }
await migrate(db);
const audit = new AuditLog({ store: new PostgresAuditStore(db) });
const signer = new HmacSigner('example-evidence-secret-change-me-0123456789');
const rail = new MemoryPaymentRail(); // your bank or chain executor: { execute, lookup? }

const kit = createTreasuryKit({
  appId: 'ops-suite-01',
  agentId: 'payout-bot',
  balance: { provider: new StaticBalanceProvider({ USD: '1000000.00' }) },
  transfer: { executor: rail },
  idempotency: new PostgresIdempotencyStore(db),
  ceilings: new PostgresCeilingStore(db),
  sanctions: new ListSanctionsScreener({
    addresses: ['0x8589427373d6d84e98730d7795d8f6f8731fda16'],
    source: 'OFAC SDN (excerpt)',
  }),
  evidenceSigner: signer,
  audit,
  policy: { dualApprovalThreshold: { USD: '10000.00' }, dailyLimit: { USD: '250000.00' } },
});

// 1. What the policy says about the model's proposal (the governed tool node does this).
const threadId = 'invoice-cycle-2026';
const args = {
  to: '0x90F8bf9A1C437435f3065A5A90310243E197c3b2',
  amount: '50000.00',
  currency: 'USD',
};
const policy = new PolicyEngine({ rules: kit.policyRules, audit });
const proposal = buildToolProposal({
  tool: kit.tool.transfer,
  arguments: args,
  threadId,
  runId: threadId,
  toolCallId: 'call_1',
  proposer: kit.agentId,
});
const decision = await policy.evaluate(proposal);
console.log(
  `policy: ${decision.verdict} (${decision.verdict === 'escalate' ? decision.route : ''})`,
);

// 2. runTool decides the call the same way: without approvals it does not run, it names the
//    request. alice and bob sign it with their keys; the same call then runs, exactly once.
const keys = { 'alice@company.com': generateKeyPair(), 'bob@company.com': generateKeyPair() };
const approvals = new ApprovalManager({
  db,
  audit,
  approvers: Object.entries(keys).map(([id, pair]) => ({ id, publicKeys: [pair.publicKey] })),
});
const call = { db, policy, approvals, audit, agentId: kit.agentId, threadId, toolCallId: 'call_1' };
const waiting = await runTool(kit.tool.transfer, args, call);
const approvalId = waiting.status === 'error' ? String(waiting.details.approvalId) : '';
console.log(`runTool: ${waiting.status === 'error' ? waiting.code : 'ran?!'} (${approvalId})`);
const request = await approvals.require(approvalId);
for (const [approver, pair] of Object.entries(keys)) {
  await approvals.decide(
    approvalId,
    signDecision({ request, decision: 'approve', approver }, pair.privateKey),
  );
}
const paid = await runTool(kit.tool.transfer, args, call);
const again = await runTool(kit.tool.transfer, args, call);
const usage = await kit.ceilings.usage('USD');
console.log(
  `transfer: ${paid.status}, replayed: ${again.replayed}, rail executions: ${rail.executions.length}`,
);
console.log(
  `ceiling: ${formatMoney(usage.total)} of ${formatMoney(usage.dailyLimit!)} USD used today`,
);

// 3. A sanctioned counterparty is refused by the policy, before anyone is asked to approve.
const sanctioned = await policy.evaluate(
  buildToolProposal({
    tool: kit.tool.transfer,
    arguments: { ...args, to: '0x8589427373D6D84E98730D7795D8f6f8731FDA16' },
    threadId,
    runId: threadId,
    toolCallId: 'call_2',
    proposer: kit.agentId,
  }),
);
console.log(
  `sanctioned: ${sanctioned.verdict} [${sanctioned.verdict === 'deny' ? sanctioned.code : ''}]`,
);

// 4. Evidence: sealed, then verified as an auditor would.
const { bundle } = await kit.sealEvidence(threadId);
// Approvals count against the approvers the auditor trusts (`veridex approvers export`).
const verified = verifyEvidence(JSON.parse(JSON.stringify(bundle)), {
  keys: [signer],
  approvers: await approvals.directory.list(),
});
console.log(
  `evidence: ${verified.valid ? 'valid' : verified.reasons.join('; ')}, events: ${verified.body?.events.map((e) => e.type).join(', ')}`,
);
await db.close();

const ok =
  decision.verdict === 'escalate' &&
  waiting.status === 'error' &&
  waiting.code === 'approval_required' &&
  paid.status === 'success' &&
  rail.executions.length === 1 &&
  sanctioned.verdict === 'deny' &&
  verified.valid;
if (!ok) process.exit(1);
