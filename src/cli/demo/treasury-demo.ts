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
import { VeridexError } from '../../errors/index.js';
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
import { Narrator } from './narrator.js';

const ACME = '0x90F8bf9A1C437435f3065A5A90310243E197c3b2';
// A made-up address on the demo's sanctions list (not a real listing).
const SANCTIONED = '0x7e5F4552091a69125d5dfCb7b8C2659029395Bdf';
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
    (messages) =>
      `Paid 50,000.00 USD to Acme Suppliers. Receipt: ${lastToolResult(messages).slice(0, 160)}`,
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
    const approvals = new ApprovalManager({ db, audit });
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

    say.step('Operators decide');
    const approvalId = pending!.approvalId;
    const refusal = async (approver: string, code: string) => {
      const error = await approvals.decide(approvalId, { decision: 'approve', approver }).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      say.expect(
        VeridexError.is(error, code as never),
        `${approver} is refused (${code})`,
        String(error),
      );
    };
    await refusal(kit.agentId, 'proposer_cannot_approve');
    await approvals.decide(approvalId, {
      decision: 'approve',
      approver: 'alice@ops.example',
      reason: 'invoice INV-1234 verified',
    });
    const afterAlice = await agent.resume(threadId);
    say.expect(
      afterAlice.status === 'suspended' && afterAlice.pendingApprovals[0]?.approvals.length === 1,
      'alice approves: still suspended, 1 of 2',
      afterAlice.status,
    );
    await refusal('alice@ops.example', 'approver_duplicate');
    await approvals.decide(approvalId, {
      decision: 'approve',
      approver: 'bob@ops.example',
      reason: 'second signature',
    });
    const paid = await agent.resume(threadId);
    say.expect(
      paid.status === 'completed',
      'bob approves: the run resumes and completes',
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
    const verification = verifyEvidence(sanctioned.evidenceBundle, {
      keys: [new Ed25519Verifier(readPublicKey(publicKeyPath))],
    });
    const types = new Set(verification.body?.events.map((event) => event.type));
    say.expect(
      verification.valid,
      `it verifies with the public key (${verification.body?.events.length} events, chain head ${verification.body?.chain.head.slice(0, 16)}…)`,
      verification.reasons.join('; '),
    );
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
    say.say(`  npx veridex verify ${sanctioned.evidencePath} --key ${publicKeyPath}`);
  } finally {
    await db.close();
  }
}
