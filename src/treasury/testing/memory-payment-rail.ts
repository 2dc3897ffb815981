import { sha256Hex } from '../../audit/sha256.js';
import type { TransferExecutor, TransferReceipt, TransferRequest } from '../types.js';
import { RailFailures } from './rail-failures.js';

/** One execution recorded by a payment-rail double. */
export interface RailExecution {
  idempotencyKey: string;
  to: string;
  amount: bigint;
  currency: string;
  decimals: number;
  receipt: TransferReceipt;
}

/**
 * Test double: a payment rail in memory that records every `execute` call (it does NOT
 * deduplicate by key, so tests can count double payments) and answers `lookup` with the first
 * receipt of a key. `failNext` injects a rail error before or after recording.
 *
 * @example
 * const rail = new MemoryPaymentRail();
 * rail.failNext(new Error('connection reset'), { afterRecording: true }); // paid, answer lost
 */
export class MemoryPaymentRail implements TransferExecutor {
  readonly executions: RailExecution[] = [];
  readonly #network: string;
  readonly #now: () => Date;
  readonly #failures = new RailFailures();

  constructor(options: { network?: string; now?: () => Date } = {}) {
    this.#network = options.network ?? 'test-rail';
    this.#now = options.now ?? (() => new Date());
  }

  /** Makes the next `execute` throw `error` (after recording the payment with `afterRecording`). */
  failNext(error: Error, options: { afterRecording?: boolean } = {}): this {
    this.#failures.push(error, options);
    return this;
  }

  async execute(request: TransferRequest): Promise<TransferReceipt> {
    return this.#failures.around(async () => {
      const receipt: TransferReceipt = {
        reference: `0x${sha256Hex(`${request.idempotencyKey}:${this.executions.length}`)}`,
        idempotencyKey: request.idempotencyKey,
        executedAt: this.#now().toISOString(),
        network: this.#network,
      };
      this.executions.push({
        idempotencyKey: request.idempotencyKey,
        to: request.to,
        amount: request.amount.amount,
        currency: request.amount.currency,
        decimals: request.amount.decimals,
        receipt,
      });
      return { ...receipt };
    });
  }

  async lookup(idempotencyKey: string): Promise<TransferReceipt | undefined> {
    const found = this.executions.find((execution) => execution.idempotencyKey === idempotencyKey);
    return found && { ...found.receipt };
  }

  /** How many times the key was executed (more than 1 is a double payment). */
  executionsOf(idempotencyKey: string): number {
    return this.executions.filter((execution) => execution.idempotencyKey === idempotencyKey)
      .length;
  }
}
