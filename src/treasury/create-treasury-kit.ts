import type { ApprovalManager, ApprovalRequest } from '../approvals/index.js';
import { AuditLog, type EvidenceSigner } from '../audit/index.js';
import { VeridexError } from '../errors/index.js';
import { evidenceNode, type SealedEvidence, sealThreadEvidence } from '../nodes/evidence-node.js';
import type { PolicyRule } from '../policy/types.js';
import type { IdempotencyStore } from '../tools/idempotency-store.js';
import type { AnyGovernedTool } from '../tools/types.js';
import type { CeilingReservation, CeilingStore } from './ceiling-store.js';
import { normalizeCounterparty, screeningKey } from './counterparty.js';
import { currencyDecimals, DEFAULT_CURRENCIES } from './currencies.js';
import { type LimitSpec, readLimits } from './limits.js';
import { addMoney, type Money, subtractMoney } from './money.js';
import { parseMoney } from './parse-money.js';
import {
  findReconciliationRequest,
  type ReconcileOptions,
  type ReconcileOutcome,
  type ReconcileResult,
  reconcileTransfer,
} from './reconcile-transfer.js';
import type { SanctionsScreener } from './sanctions-screener.js';
import { DEFAULT_TIME_LOCK_WAIT_MS, type TimeLockOptions } from './time-lock.js';
import { treasuryPolicyRules } from './treasury-policy-rules.js';
import type { TreasuryRuntime } from './treasury-runtime.js';
import { treasuryTools } from './treasury-tools.js';
import type { BalanceProvider, TransferExecutor } from './types.js';

/** The kit's policy settings; every limit is per currency (`{ USD: '10000.00' }`). */
export interface TreasuryPolicyOptions {
  /** Deny (and never reserve) single transfers above this. */
  perTransactionMax?: LimitSpec;
  /** Rolling 24-hour total per agent and currency (committed plus reserved). */
  dailyLimit?: LimitSpec;
  /** At or above this, transfers escalate to `dual_approval`. */
  dualApprovalThreshold?: LimitSpec;
  /** When given, every other counterparty is denied. EVM addresses compare case-insensitively. */
  counterpartyAllowlist?: readonly string[];
  /** Always denied with `sanctions_hit`, like a sanctions hit. */
  counterpartyDenylist?: readonly string[];
}

/** Options of {@link createTreasuryKit}. */
export interface TreasuryKitOptions {
  appId: string;
  /** The agent's identity: ceilings are kept per agent, and it can never approve its own transfers. */
  agentId: string;
  balance: { provider: BalanceProvider };
  transfer: {
    executor: TransferExecutor;
    /** Wall-clock limit of one transfer including any time-lock wait (default 120 000 ms). */
    timeoutMs?: number;
  };
  /** The same store the governed tool node uses (`PostgresIdempotencyStore` for crash safety). */
  idempotency: IdempotencyStore;
  sanctions: SanctionsScreener;
  /** `PostgresCeilingStore` for crash safety and several processes; `MemoryCeilingStore` for tests. */
  ceilings: CeilingStore;
  timeLock?: TimeLockOptions;
  evidenceSigner: EvidenceSigner;
  /** The thread audit log the kit writes its events to; pass the same one to the tool node. Default: in memory. */
  audit?: AuditLog;
  /** Where in-doubt transfers are escalated (`human_required`); use the tool node's manager. */
  approvals?: ApprovalManager;
  policy?: TreasuryPolicyOptions;
  /** Currency table overrides and additions, e.g. `{ XAU: 4 }`. */
  currencies?: Readonly<Record<string, number>>;
  /** Write sealed evidence bundles to `<dir>/<threadId>.json`. */
  evidenceOutDir?: string;
  /** Clock (injectable for tests of the rolling window). */
  now?: () => Date;
}

/** Spend of the rolling window for one currency. */
export interface TreasuryUsage {
  currency: string;
  windowMs: number;
  committed: Money;
  pending: Money;
  /** Committed plus pending. */
  total: Money;
  dailyLimit?: Money;
  /** What the daily limit still allows (never negative). */
  remaining?: Money;
  perTransactionMax?: Money;
}

/** What {@link createTreasuryKit} returns. */
export interface TreasuryKit {
  readonly appId: string;
  readonly agentId: string;
  /** `get_balance`, `screen_counterparty`, `transfer`: give them to `governedToolNode`. */
  readonly tools: readonly AnyGovernedTool[];
  readonly tool: {
    getBalance: AnyGovernedTool;
    screenCounterparty: AnyGovernedTool;
    transfer: AnyGovernedTool;
  };
  /** For `new PolicyEngine({ rules: kit.policyRules })`. */
  readonly policyRules: readonly PolicyRule[];
  readonly nodes: { evidence: ReturnType<typeof evidenceNode> };
  readonly ceilings: {
    readonly store: CeilingStore;
    /** Spend in the rolling window of `currency` (committed and pending) against the limits. */
    usage(currency: string): Promise<TreasuryUsage>;
    /** The ledger row of one transfer. */
    get(idempotencyKey: string): Promise<CeilingReservation | undefined>;
  };
  readonly audit: AuditLog;
  readonly idempotency: IdempotencyStore;
  readonly approvals: ApprovalManager | undefined;
  /** Parses an amount with the kit's currency table. @throws VeridexError `input_invalid`. */
  parseMoney(amount: string, currency: string): Money;
  /** The open reconciliation request of an in-doubt transfer, to sign a decision on (`signDecision`). */
  reconciliationRequest(key: string): Promise<ApprovalRequest | undefined>;
  /** Settles an in-doubt transfer (see `reconcileTransfer`). */
  reconcile(
    key: string,
    outcome: ReconcileOutcome,
    options?: ReconcileOptions,
  ): Promise<ReconcileResult>;
  /** Seals the thread's audit events into a signed evidence bundle (appends `run_completed` first). */
  sealEvidence(threadId: string): Promise<SealedEvidence>;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The treasury kit: balance, screening and transfer tools, the policy rules that gate them,
 * ceilings, crash-safe execution, and the evidence node. Wire it into your own graph:
 *
 * @example
 * const kit = createTreasuryKit({
 *   appId: 'ops-suite-01', agentId: 'payout-bot',
 *   balance: { provider }, transfer: { executor },
 *   idempotency: new PostgresIdempotencyStore(db), ceilings: new PostgresCeilingStore(db),
 *   sanctions: ListSanctionsScreener.fromFile('sdn.txt'), evidenceSigner: signer, audit, approvals,
 *   policy: { dualApprovalThreshold: { USD: '10000.00' }, dailyLimit: { USD: '250000.00' } },
 * });
 * const policy = new PolicyEngine({ rules: kit.policyRules, audit });
 * const tools = governedToolNode({ tools: kit.tools, policy, approvals, audit, idempotency: kit.idempotency, agentId: kit.agentId });
 *
 * @throws VeridexError `config_invalid` for malformed limits, currencies or time-lock settings.
 */
export function createTreasuryKit(options: TreasuryKitOptions): TreasuryKit {
  for (const field of ['appId', 'agentId'] as const) {
    if (typeof options[field] !== 'string' || options[field] === '') {
      throw new VeridexError('config_invalid', `createTreasuryKit needs a non-empty ${field}.`);
    }
  }
  const currencies = { ...DEFAULT_CURRENCIES, ...options.currencies };
  for (const currency of Object.keys(options.currencies ?? {}))
    currencyDecimals(currency, currencies);
  const policy = options.policy ?? {};
  const timeoutMs = options.transfer.timeoutMs ?? 120_000;
  checkTimeLock(options.timeLock, timeoutMs);
  const runtime: TreasuryRuntime = {
    appId: options.appId,
    agentId: options.agentId,
    balance: options.balance.provider,
    executor: options.transfer.executor,
    sanctions: options.sanctions,
    ceilings: options.ceilings,
    audit: options.audit ?? new AuditLog(),
    approvals: options.approvals,
    currencies,
    perTransactionMax: readLimits(policy.perTransactionMax, 'policy.perTransactionMax', currencies),
    dailyLimit: readLimits(policy.dailyLimit, 'policy.dailyLimit', currencies),
    dualApprovalThreshold: readLimits(
      policy.dualApprovalThreshold,
      'policy.dualApprovalThreshold',
      currencies,
    ),
    allowlist:
      policy.counterpartyAllowlist &&
      new Set(policy.counterpartyAllowlist.map(normalizeCounterparty)),
    denylist: new Set((policy.counterpartyDenylist ?? []).map(screeningKey)),
    timeLock: options.timeLock,
    windowMs: DAY_MS,
    now: options.now ?? (() => new Date()),
  };
  const tool = treasuryTools(runtime, { timeoutMs });
  const evidence = {
    audit: runtime.audit,
    signers: [options.evidenceSigner],
    subject: { appId: options.appId, agentId: options.agentId },
    ...(options.evidenceOutDir ? { outDir: options.evidenceOutDir } : {}),
  };
  return {
    appId: options.appId,
    agentId: options.agentId,
    tools: [tool.getBalance, tool.screenCounterparty, tool.transfer],
    tool,
    policyRules: treasuryPolicyRules(runtime, tool.transfer),
    nodes: { evidence: evidenceNode(evidence) },
    ceilings: {
      store: runtime.ceilings,
      usage: (currency) => usageOf(runtime, currency),
      get: (key) => runtime.ceilings.get(key),
    },
    audit: runtime.audit,
    idempotency: options.idempotency,
    approvals: options.approvals,
    parseMoney: (amount, currency) => parseMoney(amount, currency, { currencies }),
    reconciliationRequest: (key) => findReconciliationRequest(runtime, key),
    reconcile: (key, outcome, reconcileOptions) =>
      reconcileTransfer(
        runtime,
        tool.transfer,
        options.idempotency,
        key,
        outcome,
        reconcileOptions,
      ),
    sealEvidence: (threadId) => sealThreadEvidence(threadId, evidence),
  };
}

async function usageOf(runtime: TreasuryRuntime, currency: string): Promise<TreasuryUsage> {
  const decimals = currencyDecimals(currency, runtime.currencies);
  const since = new Date(runtime.now().getTime() - runtime.windowMs);
  const scope = { appId: runtime.appId, agentId: runtime.agentId, currency, decimals };
  const { committed, pending } = await runtime.ceilings.usage(scope, since);
  const total = addMoney(committed, pending);
  const dailyLimit = runtime.dailyLimit.get(currency);
  const perTransactionMax = runtime.perTransactionMax.get(currency);
  const left = dailyLimit && subtractMoney(dailyLimit, total);
  return {
    currency,
    windowMs: runtime.windowMs,
    committed,
    pending,
    total,
    ...(dailyLimit ? { dailyLimit } : {}),
    ...(left ? { remaining: left.amount < 0n ? { ...left, amount: 0n } : left } : {}),
    ...(perTransactionMax ? { perTransactionMax } : {}),
  };
}

function checkTimeLock(timeLock: TimeLockOptions | undefined, timeoutMs: number): void {
  if (!timeLock) return;
  const maxWaitMs = timeLock.maxWaitMs ?? DEFAULT_TIME_LOCK_WAIT_MS;
  const delayMs = timeLock.delayMs ?? 0;
  const valid = (value: number) => Number.isInteger(value) && value >= 0;
  if (
    !valid(maxWaitMs) ||
    !valid(delayMs) ||
    delayMs > maxWaitMs ||
    maxWaitMs + 5_000 > timeoutMs
  ) {
    throw new VeridexError(
      'config_invalid',
      `timeLock needs integers 0 ≤ delayMs (${delayMs}) ≤ maxWaitMs (${maxWaitMs}), and maxWaitMs + 5000 ≤ transfer.timeoutMs (${timeoutMs}): the transfer tool sits out the delay within its timeout.`,
    );
  }
}
