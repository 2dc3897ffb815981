import type { ApprovalManager } from '../approvals/index.js';
import type { AuditLog } from '../audit/index.js';
import type { CeilingLimits, CeilingStore } from './ceiling-store.js';
import { normalizeCounterparty, screeningKey } from './counterparty.js';
import type { Money } from './money.js';
import type { SanctionsScreener } from './sanctions-screener.js';
import type { TimeLockOptions } from './time-lock.js';
import type { BalanceProvider, TransferExecutor } from './types.js';

/** Everything the kit's tools, rules and recovery share (built once by `createTreasuryKit`). */
export interface TreasuryRuntime {
  appId: string;
  agentId: string;
  balance: BalanceProvider;
  executor: TransferExecutor;
  sanctions: SanctionsScreener;
  ceilings: CeilingStore;
  audit: AuditLog;
  approvals: ApprovalManager | undefined;
  currencies: Readonly<Record<string, number>>;
  perTransactionMax: ReadonlyMap<string, Money>;
  dailyLimit: ReadonlyMap<string, Money>;
  dualApprovalThreshold: ReadonlyMap<string, Money>;
  /** Normalised counterparties; undefined when no allowlist is configured. */
  allowlist: ReadonlySet<string> | undefined;
  /** Screening keys (`screeningKey`): look-alike names and re-spaced IBANs match. */
  denylist: ReadonlySet<string>;
  timeLock: TimeLockOptions | undefined;
  windowMs: number;
  now: () => Date;
}

/** The outcome of screening one counterparty against the denylist, sanctions and allowlist. */
export interface CounterpartyCheck {
  /** The comparison form (EVM addresses in lower case). */
  counterparty: string;
  status: 'clear' | 'hit' | 'not_allowed';
  /** Which list decided: `denylist`, `allowlist`, or the screener's source. */
  source: string;
  reason?: string;
  matched?: string;
}

/** Denylist, then the sanctions screener: a hit here is `sanctions_hit`. */
export async function screenSanctions(
  runtime: TreasuryRuntime,
  to: string,
): Promise<CounterpartyCheck> {
  const counterparty = normalizeCounterparty(to);
  const key = screeningKey(to);
  if (runtime.denylist.has(key)) {
    return {
      counterparty,
      status: 'hit',
      source: 'denylist',
      matched: key,
      reason: 'counterparty is on the treasury denylist',
    };
  }
  const result = await runtime.sanctions.screen(to);
  if (result.status === 'hit') {
    return {
      counterparty,
      status: 'hit',
      source: result.source,
      matched: result.matched,
      reason: result.reason,
    };
  }
  return { counterparty, status: 'clear', source: result.source };
}

/** The allowlist, when configured: anything not on it is `not_allowed`. */
export function checkAllowlist(
  runtime: TreasuryRuntime,
  to: string,
): CounterpartyCheck | undefined {
  if (!runtime.allowlist) return undefined;
  const counterparty = normalizeCounterparty(to);
  if (runtime.allowlist.has(counterparty)) return undefined;
  return {
    counterparty,
    status: 'not_allowed',
    source: 'allowlist',
    reason: 'counterparty is not on the treasury allowlist',
  };
}

/** Full screening as the transfer pipeline runs it: sanctions first (they win), then the allowlist. */
export async function checkCounterparty(
  runtime: TreasuryRuntime,
  to: string,
): Promise<CounterpartyCheck> {
  const sanctions = await screenSanctions(runtime, to);
  if (sanctions.status !== 'clear') return sanctions;
  return checkAllowlist(runtime, to) ?? sanctions;
}

/** The ceiling limits of one currency. */
export function limitsFor(runtime: TreasuryRuntime, currency: string): CeilingLimits {
  const perTransactionMax = runtime.perTransactionMax.get(currency);
  const dailyLimit = runtime.dailyLimit.get(currency);
  return {
    windowMs: runtime.windowMs,
    ...(perTransactionMax ? { perTransactionMax } : {}),
    ...(dailyLimit ? { dailyLimit } : {}),
  };
}
