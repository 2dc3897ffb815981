import type { Money } from './money.js';

/** Who is asking, for providers that serve several agents. */
export interface TreasuryScope {
  appId: string;
  agentId: string;
}

/**
 * Where balances come from (a bank API, a wallet, a ledger). `amount` may be a bigint or an
 * integer string of minor units; `decimals` may differ from the kit's currency table (the
 * kit compares exactly at the larger precision).
 */
export interface BalanceProvider {
  getBalance(
    currency: string,
    scope: TreasuryScope,
  ): Promise<Money | (Omit<Money, 'amount'> & { amount: string })>;
}

/** One transfer handed to the executor. */
export interface TransferRequest {
  /**
   * The call's deterministic idempotency key. Pass it to the rail (payment API idempotency
   * header, on-chain nonce bookkeeping) so that a retried request never pays twice.
   */
  idempotencyKey: string;
  /** The counterparty as the model gave it (trimmed). */
  to: string;
  amount: Money;
  memo?: string;
  appId: string;
  agentId: string;
  threadId: string;
  toolCallId: string;
  /** The humans who approved the transfer (empty when policy allowed it without approval). */
  approvedBy: readonly string[];
}

/** What the rail says about an executed transfer. Stored in the audit log and the ceiling ledger. */
export interface TransferReceipt {
  /** The rail's id of the transfer: a payment id, an on-chain transaction hash. */
  reference: string;
  /** Must equal the request's key when present (a receipt for another transfer is refused). */
  idempotencyKey?: string;
  /** ISO 8601 time of execution (default: when the kit received the receipt). */
  executedAt?: string;
  /** Network or rail name, e.g. `ethereum`, `sepa`. */
  network?: string;
  /** Further JSON-safe facts (block number, fee, status). */
  details?: Record<string, string | number | boolean | null>;
}

/** Execution options: the signal aborts on tool timeout or run cancellation. */
export interface TransferExecuteOptions {
  signal?: AbortSignal;
}

/**
 * Moves the money. `execute` should be idempotent per `request.idempotencyKey` on the rail's
 * side when the rail allows it. `lookup` answers "did a transfer with this key happen?" and
 * must be authoritative: a receipt if the rail accepted a transfer with this key (executed or
 * pending settlement), `undefined` only if it never did. With `lookup`, a transfer interrupted
 * mid-execution is settled automatically; without it, it is marked in doubt and escalated to a
 * human (see `kit.reconcile`).
 *
 * Throw {@link TransferRejectedError} when the rail refused the transfer and nothing moved;
 * any other error means "unknown" and is treated as possibly executed.
 */
export interface TransferExecutor {
  execute(request: TransferRequest, options?: TransferExecuteOptions): Promise<TransferReceipt>;
  lookup?(idempotencyKey: string): Promise<TransferReceipt | undefined>;
}
