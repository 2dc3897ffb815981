// Public surface of the treasury module: `@veridex/langgraph/treasury`.
export type {
  CeilingLimits,
  CeilingReservation,
  CeilingScope,
  CeilingState,
  CeilingStore,
  CeilingUsage,
  ReserveCeilingOutcome,
  ReserveCeilingRequest,
} from './ceiling-store.js';
export {
  type CounterpartyKind,
  counterpartyKind,
  EVM_ADDRESS,
  ibanOf,
  nameScreeningKey,
  normalizeCounterparty,
  normalizeName,
  screeningKey,
} from './counterparty.js';
export {
  createTreasuryKit,
  type TreasuryKit,
  type TreasuryKitOptions,
  type TreasuryPolicyOptions,
  type TreasuryUsage,
} from './create-treasury-kit.js';
export { CURRENCY_CODE, currencyDecimals, DEFAULT_CURRENCIES, MAX_DECIMALS } from './currencies.js';
export { formatMoney, moneyJson } from './format-money.js';
export type { LimitSpec } from './limits.js';
export {
  ListSanctionsScreener,
  type ListSanctionsScreenerOptions,
} from './list-sanctions-screener.js';
export { MemoryCeilingStore } from './memory-ceiling-store.js';
export {
  addMoney,
  compareMoney,
  type Money,
  type MoneyJson,
  subtractMoney,
  toMoney,
  zeroMoney,
} from './money.js';
export { type ParseMoneyOptions, parseMoney } from './parse-money.js';
export { PostgresCeilingStore } from './postgres-ceiling-store.js';
export type { ReconcileOptions, ReconcileOutcome, ReconcileResult } from './reconcile-transfer.js';
export {
  NoopSanctionsScreener,
  type SanctionsScreener,
  type ScreeningResult,
} from './sanctions-screener.js';
export { DatabasePaymentRail } from './testing/database-payment-rail.js';
export { MemoryPaymentRail, type RailExecution } from './testing/memory-payment-rail.js';
export { StaticBalanceProvider } from './testing/static-balance-provider.js';
export { withoutLookup } from './testing/without-lookup.js';
export {
  DEFAULT_TIME_LOCK_WAIT_MS,
  type TimeLockOptions,
  type TimeLockSubject,
} from './time-lock.js';
export type { TransferInput } from './transfer-pipeline.js';
export { TransferRejectedError } from './transfer-rejected-error.js';
export { type TransferOutput, transferOutputSchema } from './transfer-settlement.js';
export {
  TREASURY_DENY_PRIORITY,
  TREASURY_ESCALATE_PRIORITY,
} from './treasury-policy-rules.js';
export type {
  BalanceProvider,
  TransferExecuteOptions,
  TransferExecutor,
  TransferReceipt,
  TransferRequest,
  TreasuryScope,
} from './types.js';
