import { ApprovalManager } from '../../src/approvals/index.js';
import { AuditLog, HmacSigner, PostgresAuditStore } from '../../src/audit/index.js';
import type { Database } from '../../src/db/index.js';
import { executeTool } from '../../src/tools/execute-tool.js';
import {
  type IdempotencyStore,
  MemoryIdempotencyStore,
  PostgresIdempotencyStore,
} from '../../src/tools/index.js';
import {
  type CeilingStore,
  createTreasuryKit,
  DatabasePaymentRail,
  MemoryCeilingStore,
  MemoryPaymentRail,
  NoopSanctionsScreener,
  PostgresCeilingStore,
  type SanctionsScreener,
  StaticBalanceProvider,
  type TransferExecutor,
  type TreasuryKitOptions,
  withoutLookup,
} from '../../src/treasury/index.js';
import { testApproverInits } from '../support/approvers.js';

export const ACME = '0x90F8bf9A1C437435f3065A5A90310243E197c3b2';
export const SANCTIONED = '0x8589427373D6D84E98730D7795D8f6f8731FDA16';
export const signer = new HmacSigner('treasury-test-secret-0123456789abcdef');

/** The storage a kit under test runs on: all in memory, or all in one database. */
export type KitBackend = { kind: 'memory' } | { kind: 'database'; db: Database };

/** A rail double of either kind, with one way to count executions. */
export type TestRail = (MemoryPaymentRail | DatabasePaymentRail) & TransferExecutor;

export interface KitFixtureOptions {
  backend: KitBackend;
  balances?: Record<string, string>;
  lookup?: boolean;
  sanctions?: SanctionsScreener;
  /** Wraps the rail double (slow or failing executors). */
  executor?: (rail: TestRail) => TransferExecutor;
  transferTimeoutMs?: number;
  kit?: Partial<TreasuryKitOptions>;
}

/** Who may sign decisions in the kit tests; the agent holds a key too and must still never count. */
export const KIT_APPROVERS = [
  'alice@company.com',
  'bob@company.com',
  'ops@example.com',
  'payout-bot',
];

/** A treasury kit wired the way an application would, on memory or on a database. */
export async function kitFixture(options: KitFixtureOptions) {
  const { backend } = options;
  const db = backend.kind === 'database' ? backend.db : undefined;
  const audit = db ? new AuditLog({ store: new PostgresAuditStore(db) }) : new AuditLog();
  const approvals = new ApprovalManager({
    audit,
    approvers: testApproverInits(KIT_APPROVERS),
    ...(db ? { db } : {}),
  });
  const idempotency: IdempotencyStore = db
    ? new PostgresIdempotencyStore(db)
    : new MemoryIdempotencyStore();
  const ceilings: CeilingStore = db ? new PostgresCeilingStore(db) : new MemoryCeilingStore();
  const rail: TestRail = db ? await new DatabasePaymentRail(db).install() : new MemoryPaymentRail();
  const balance = new StaticBalanceProvider(options.balances ?? { USD: '1000000.00' });
  const kit = createTreasuryKit({
    appId: 'ops-suite-01',
    agentId: 'payout-bot',
    balance: { provider: balance },
    transfer: {
      executor: options.executor?.(rail) ?? (options.lookup === false ? withoutLookup(rail) : rail),
      ...(options.transferTimeoutMs ? { timeoutMs: options.transferTimeoutMs } : {}),
    },
    idempotency,
    sanctions: options.sanctions ?? new NoopSanctionsScreener(),
    ceilings,
    evidenceSigner: signer,
    audit,
    approvals,
    ...options.kit,
  });
  const executions = async (key?: string): Promise<number> =>
    rail instanceof MemoryPaymentRail
      ? key === undefined
        ? rail.executions.length
        : rail.executionsOf(key)
      : (await rail.executions(key)).length;
  /** Runs the transfer tool the way the governed tool node does for an approved call. */
  const transfer = (
    args: Record<string, unknown>,
    call: { threadId?: string; toolCallId?: string; approvedBy?: string[] } = {},
    extra: { idempotency?: IdempotencyStore } = {},
  ) =>
    executeTool(kit.tool.transfer, args, {
      threadId: call.threadId ?? 'thread-1',
      toolCallId: call.toolCallId ?? 'call_1',
      proposalHash: `proposal-of-${call.toolCallId ?? 'call_1'}`,
      approvedBy: call.approvedBy ?? ['alice', 'bob'],
      idempotency: extra.idempotency ?? idempotency,
      audit,
    });
  const eventTypes = async (threadId = 'thread-1') =>
    (await audit.events(threadId)).map((event) => event.type);
  return {
    kit,
    rail,
    balance,
    audit,
    approvals,
    idempotency,
    ceilings,
    executions,
    transfer,
    eventTypes,
  };
}
