// The demo's treasury payout agent over a test database: the $50,000 transfer to Acme needs
// dual approval. Real graph, real policy, real approvals; the model is scripted and the payment
// rail is the database double, as in `veridex demo`.
import { ApprovalManager } from '../../src/approvals/index.js';
import {
  AuditLog,
  Ed25519Signer,
  generateKeyPair,
  PostgresAuditStore,
} from '../../src/audit/index.js';
import type { Database } from '../../src/db/index.js';
import { createGovernedAgent } from '../../src/nodes/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { PostgresIdempotencyStore } from '../../src/tools/index.js';
import {
  createTreasuryKit,
  DatabasePaymentRail,
  ListSanctionsScreener,
  PostgresCeilingStore,
  StaticBalanceProvider,
} from '../../src/treasury/index.js';

export const ACME = '0x90F8bf9A1C437435f3065A5A90310243E197c3b2';

/** Builds the agent; the approvals manager uses the approver directory in `db`. */
export async function treasuryAgent(db: Database) {
  const audit = new AuditLog({ store: new PostgresAuditStore(db) });
  const approvals = new ApprovalManager({ db, audit, operators: ['carol@ops.example'] });
  const rail = await new DatabasePaymentRail(db).install();
  const signer = new Ed25519Signer(generateKeyPair().privateKey);
  const kit = createTreasuryKit({
    appId: 'ops-suite-01',
    agentId: 'payout-bot',
    balance: { provider: new StaticBalanceProvider({ USD: '1000000.00' }) },
    transfer: { executor: rail },
    idempotency: new PostgresIdempotencyStore(db),
    sanctions: new ListSanctionsScreener({ addresses: [], source: 'test list' }),
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
  const model = scriptedModel([
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
    'Paid 50,000.00 USD to Acme Suppliers.',
  ]);
  const agent = await createGovernedAgent({
    name: 'Treasury Payout Agent',
    agentId: kit.agentId,
    model,
    instructions: 'You are a treasury payout agent.',
    tools: [],
    plugins: [kit],
    database: db,
    audit,
    approvals,
    idempotency: kit.idempotency,
    evidenceSigner: signer,
  });
  return { agent, approvals, audit, rail, signer };
}
