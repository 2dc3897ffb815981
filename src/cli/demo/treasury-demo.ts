import { writeFileSync } from 'node:fs';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { type BaseMessage, isToolMessage } from '@langchain/core/messages';
import { ApprovalManager } from '../../approvals/index.js';
import {
  AuditLog,
  Ed25519Verifier,
  loadOrCreateSigner,
  PostgresAuditStore,
  readPublicKey,
  verifyEvidence,
} from '../../audit/index.js';
import { createDatabase, DEFAULT_PGLITE_DIR, migrate } from '../../db/index.js';
import { VeridexError, type VeridexErrorCode } from '../../errors/index.js';
import { type SignedDecision, serializeApprovers, signDecision } from '../../identity/index.js';
import { createGovernedAgent } from '../../nodes/index.js';
import { scriptedModel } from '../../testing/index.js';
import { PostgresIdempotencyStore } from '../../tools/index.js';
import {
  createTreasuryKit,
  DatabasePaymentRail,
  formatMoney,
  ListSanctionsScreener,
  PostgresCeilingStore,
  StaticBalanceProvider,
} from '../../treasury/index.js';
import type { CliIo } from '../io.js';
import { DEMO_APPROVER_KEY_DIR, type DemoApprover, demoApprover } from './demo-approvers.js';
import { Narrator } from './narrator.js';

/** The public approver directory the demo exports for `veridex verify --approvers`. */
const DEMO_APPROVERS_FILE = './.veridex/approvers.json';

const ACME = '0x90F8bf9A1C437435f3065A5A90310243E197c3b2';
// A made-up address on the demo's sanctions list (not a real listing).
const SANCTIONED = '0x7e5F4552091a69125d5dfCb7b8C2659029395Bdf';
const ALICE = { file: 'alice', id: 'alice@ops.example', name: 'Alice (treasury)' };
const BOB = { file: 'bob', id: 'bob@ops.example', name: 'Bob (finance)' };
const CAROL = { file: 'carol', id: 'carol@ops.example', name: 'Carol (agent operator)' };
const INSTRUCTIONS =
  'You are a treasury payout agent. Check the balance, pay approved invoices with the transfer tool, never try to work around policy.';

/** The conversation the scripted model plays when no OPENAI_API_KEY is set (seed 000 §16). */
function demoModel(): BaseChatModel {
  const lastToolResult = (messages: readonly BaseMessage[]) =>
    String(messages.findLast((message) => isToolMessage(message))?.content ?? '');
  return scriptedModel([
    { toolCalls: [{ name: 'get_balance', args: { currency: 'USD' } }] },
    {
      toolCalls: [
        {
          name: 'transfer',
          args: {
            to: ACME,
            amount: '50000.00',
            currency: 'USD',
            memo: 'Acme Suppliers, invoice INV-1234',
          },
        },
      ],
    },
    (messages) => `Paid 50,000.00 USD to Acme Suppliers. ${receiptOf(lastToolResult(messages))}`,
    {
      toolCalls: [
        {
          name: 'transfer',
          args: { to: SANCTIONED, amount: '1000.00', currency: 'USD', memo: 'consulting' },
        },
      ],
    },
    (messages) => `I did not make that payment: ${lastToolResult(messages).slice(0, 200)}`,
  ]);
}

/** The rail's reference in a transfer tool result, whole (never cut mid-way). */
function receiptOf(toolResult: string): string {
  const reference = /"reference":"(0x[0-9a-f]{64})"/.exec(toolResult)?.[1];
  return reference ? `Receipt ${reference}.` : `The tool said: ${toolResult.slice(0, 120)}`;
}

async function defaultModel(): Promise<{ model: BaseChatModel; label: string }> {
  if (!process.env.OPENAI_API_KEY)
    return { model: demoModel(), label: 'scripted model (no OPENAI_API_KEY)' };
  const { ChatOpenAI } = await import('@langchain/openai');
  const name = process.env.OPENAI_MODEL ?? 'gpt-4o-mini';
  return { model: new ChatOpenAI({ model: name, temperature: 0 }), label: `ChatOpenAI ${name}` };
}

/**
 * The headline scenario, end to end on embedded PGlite: a treasury agent checks its balance,
 * tries to pay $50,000 to Acme Suppliers, is suspended for dual approval, is refused the
 * proposer's own approval and a duplicate, pays exactly once after alice and bob approve,
 * is denied a payment to a sanctioned address before any approval, and seals signed evidence.
 * Throws `DemoDeviation` as soon as anything differs.
 */
export async function runTreasuryDemo(io: CliIo): Promise<void> {
  const say = new Narrator(io);
  const db = await createDatabase({ dataDir: DEFAULT_PGLITE_DIR });
  try {
    await migrate(db);
    const { signer, created, publicKeyPath } = loadOrCreateSigner();
    const { model, label } = await defaultModel();
    const audit = new AuditLog({ store: new PostgresAuditStore(db) });
    // carol operates the agent: she holds an approver key, yet never approves its proposals.
    const approvals = new ApprovalManager({ db, audit, operators: [CAROL.id] });
    const rail = await new DatabasePaymentRail(db).install();
    const kit = createTreasuryKit({
      appId: 'ops-suite-01',
      agentId: 'payout-bot',
      balance: { provider: new StaticBalanceProvider({ USD: '1000000.00' }) },
      transfer: { executor: rail },
      idempotency: new PostgresIdempotencyStore(db),
      sanctions: new ListSanctionsScreener({
        addresses: [SANCTIONED],
        source: 'demo sanctions list',
      }),
      ceilings: new PostgresCeilingStore(db),
      evidenceSigner: signer,
      audit,
      approvals,
      policy: {
        dualApprovalThreshold: { USD: '10000.00' },
        perTransactionMax: { USD: '250000.00' },
        dailyLimit: { USD: '5000000.00' },
      },
    });
    const agent = await createGovernedAgent({
      name: 'Treasury Payout Agent',
      agentId: kit.agentId,
      model,
      instructions: INSTRUCTIONS,
      tools: [],
      plugins: [kit],
      database: db,
      audit,
      approvals,
      idempotency: kit.idempotency,
      evidenceSigner: signer,
      evidenceDir: './.veridex/evidence',
    });
    io.out(`Treasury demo on PGlite (${DEFAULT_PGLITE_DIR}) with the ${label}.`);
    io.out(
      created
        ? `Generated the evidence key ${signer.keyId} (${publicKeyPath}).`
        : `Evidence key ${signer.keyId}.`,
    );
    const [alice, bob, carol] = await Promise.all(
      [ALICE, BOB, CAROL].map((who) =>
        demoApprover(approvals.directory, who.file, who.id, who.name),
      ),
    );
    io.out(
      `Approvers ${alice!.id}, ${bob!.id} and ${carol!.id} sign with keys in ${DEMO_APPROVER_KEY_DIR}.`,
    );
    const earlier = await kit.ceilings.usage('USD');
    if (earlier.committed.amount > 0n) {
      io.out(
        `State persists in ./.veridex: earlier runs already spent ${formatMoney(earlier.committed)} USD in this 24-hour window (delete ./.veridex to start fresh).`,
      );
    }

    say.step(`The agent checks its balance and pays $50,000 USD to Acme Suppliers (${ACME})`);
    const first = await agent.run(
      `Pay $50,000 USD to Acme Suppliers (address: ${ACME}) for invoice INV-1234.`,
    );
    const threadId = first.threadId;
    const pending = first.pendingApprovals[0];
    say.expect(
      first.status === 'suspended',
      'the run is suspended before any money moves',
      first.status,
    );
    say.expect(
      pending?.route === 'dual_approval',
      'dual approval is required (threshold $10,000)',
      pending?.route,
    );
    say.say(`approval ${pending!.approvalId}: ${pending!.reason}`);
    say.expect(
      !(await audit.events(threadId)).some((event) => event.type === 'transfer_executed'),
      'nothing was paid yet',
    );

    say.step('Approvers decide, each signing with their own key');
    const approvalId = pending!.approvalId;
    const sign = (who: DemoApprover, approver = who.id, reason?: string) =>
      signDecision(
        { request: pending!, decision: 'approve', approver, ...(reason ? { reason } : {}) },
        who.signer,
      );
    const refusal = async (what: string, decision: SignedDecision, code: VeridexErrorCode) => {
      const error = await approvals.decide(approvalId, decision).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      say.expect(VeridexError.is(error, code), `${what} is refused (${code})`, String(error));
    };
    await refusal(`${carol!.id}, who operates the agent,`, sign(carol!), 'proposer_cannot_approve');
    await refusal(
      `a forged decision (${bob!.id}'s name, ${alice!.id}'s key)`,
      sign(alice!, bob!.id),
      'decision_key_unknown',
    );
    await approvals.decide(approvalId, sign(alice!, alice!.id, 'invoice INV-1234 verified'));
    const afterAlice = await agent.resume(threadId);
    say.expect(
      afterAlice.status === 'suspended' && afterAlice.pendingApprovals[0]?.approvals.length === 1,
      `${alice!.id} signs: still suspended, 1 of 2`,
      afterAlice.status,
    );
    await refusal(`${alice!.id} signing again`, sign(alice!), 'approver_duplicate');
    const paid = await agent.resume(threadId, sign(bob!, bob!.id, 'second signature'));
    say.expect(
      paid.status === 'completed',
      `${bob!.id} signs: the run resumes and completes`,
      paid.status,
    );
    say.say(`agent: ${paid.output}`);

    say.step('Exactly one transfer, and the rolling ceiling shows the spend');
    const executed = (await audit.events(threadId)).filter(
      (event) => event.type === 'tool_executed' && event.payload.toolName === 'transfer',
    );
    const key = String(executed[0]?.payload.idempotencyKey ?? '');
    say.expect(
      executed.length === 1 && (await rail.executions(key)).length === 1,
      'the payment rail executed the transfer exactly once',
      `${executed.length} executions recorded`,
    );
    const usage = await kit.ceilings.usage('USD');
    say.say(
      `24-hour spend of payout-bot: ${formatMoney(usage.committed)} USD committed, daily limit ${usage.dailyLimit ? `${formatMoney(usage.dailyLimit)} USD` : 'none'}`,
    );

    say.step(`A payment to a sanctioned address (${SANCTIONED})`);
    const requestsBefore = (await approvals.listByThread(threadId)).length;
    const sanctioned = await agent.run(`Pay $1,000 USD to ${SANCTIONED} for consulting.`, {
      threadId,
    });
    const requestsAfter = (await approvals.listByThread(threadId)).length;
    say.expect(
      requestsAfter === requestsBefore,
      'it is denied before any approval is requested',
      `${requestsAfter - requestsBefore} new requests`,
    );
    say.expect(
      sanctioned.output.includes('sanctions_hit'),
      'the agent is told why (sanctions_hit)',
      sanctioned.output,
    );
    say.expect(
      !(await rail.executions()).some(
        (execution) => execution.to.toLowerCase() === SANCTIONED.toLowerCase(),
      ),
      'no money moved',
    );

    say.step('Signed evidence');
    say.expect(
      sanctioned.status === 'completed' && sanctioned.evidencePath !== undefined,
      `bundle written to ${sanctioned.evidencePath}`,
    );
    const approverList = await approvals.directory.list();
    writeFileSync(DEMO_APPROVERS_FILE, `${serializeApprovers(approverList)}\n`);
    const verification = verifyEvidence(sanctioned.evidenceBundle, {
      keys: [new Ed25519Verifier(readPublicKey(publicKeyPath))],
      approvers: approverList,
    });
    const types = new Set(verification.body?.events.map((event) => event.type));
    say.expect(
      verification.valid,
      `it verifies with the public key (${verification.body?.events.length} events, chain head ${verification.body?.chain.head.slice(0, 16)}…)`,
      verification.reasons.join('; '),
    );
    const signedApprovals = verification.decisions.filter(
      (check) => check.decision === 'approve' && check.status === 'valid' && check.keyTrusted,
    );
    say.expect(
      signedApprovals.length === 2,
      'the $50,000 transfer carries two signed approvals that verify against the approvers',
      JSON.stringify(verification.decisions),
    );
    for (const check of signedApprovals) {
      say.say(
        `  ${check.approverName ?? check.approver} <${check.approver}> approved ${check.toolName} with key ${check.keyId}`,
      );
    }
    for (const type of [
      'balance_checked',
      'counterparty_screened',
      'policy_decision',
      'approval_decided',
      'transfer_executed',
      'ceiling_committed',
    ] as const) {
      say.expect(types.has(type), `it holds ${type.replace('_', ' ')} events`);
    }
    say.say('Verify it offline, anywhere:');
    say.say(
      `  npx veridex verify ${sanctioned.evidencePath} --key ${publicKeyPath} --approvers ${DEMO_APPROVERS_FILE}`,
    );
  } finally {
    await db.close();
  }
}
