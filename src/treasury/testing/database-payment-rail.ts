import { sha256Hex } from '../../audit/sha256.js';
import type { Database } from '../../db/database.js';
import {
  CREATE_TEST_RAIL,
  INSERT_RAIL_EXECUTION,
  LIST_RAIL_EXECUTIONS,
  RAIL_EXECUTIONS_OF_KEY,
} from '../sql.js';
import type { TransferExecutor, TransferReceipt, TransferRequest } from '../types.js';
import type { RailExecution } from './memory-payment-rail.js';
import { RailFailures } from './rail-failures.js';

interface RailRow {
  id: string;
  idempotency_key: string;
  to_address: string;
  amount: string;
  currency: string;
  decimals: number;
  reference: string;
  network: string;
  executed_ms: number | string;
}

/**
 * Test double: a durable payment rail. Every `execute` is committed to the table
 * `veridex_test_payment_rail` BEFORE it is acknowledged — so a process killed right after
 * the rail moved the money still leaves the payment on record — and executions are never
 * deduplicated, so crash tests can count double payments. `lookup` returns the first
 * execution of a key. Call `install()` once (it creates its own table; it is not part of the
 * library's migrations). Wrap it in `withoutLookup()` for a rail that cannot be asked.
 *
 * @example
 * const rail = await new DatabasePaymentRail(db).install();
 * createTreasuryKit({ ..., transfer: { executor: rail } });
 */
export class DatabasePaymentRail implements TransferExecutor {
  readonly #db: Database;
  readonly #network: string;
  readonly #failures = new RailFailures();

  constructor(db: Database, options: { network?: string } = {}) {
    this.#db = db;
    this.#network = options.network ?? 'test-rail';
  }

  /** Creates the rail's table if missing. */
  async install(): Promise<this> {
    await this.#db.query(CREATE_TEST_RAIL);
    return this;
  }

  /** Makes the next `execute` throw `error` (after recording the payment with `afterRecording`). */
  failNext(error: Error, options: { afterRecording?: boolean } = {}): this {
    this.#failures.push(error, options);
    return this;
  }

  async execute(request: TransferRequest): Promise<TransferReceipt> {
    return this.#failures.around(async () => {
      const executedAt = new Date();
      const nonce = `${request.idempotencyKey}:${executedAt.getTime()}:${Math.random()}`;
      const reference = `0x${sha256Hex(nonce)}`;
      await this.#db.query(INSERT_RAIL_EXECUTION, [
        request.idempotencyKey,
        request.to,
        request.amount.amount.toString(),
        request.amount.currency,
        request.amount.decimals,
        reference,
        this.#network,
        executedAt,
      ]);
      return {
        reference,
        idempotencyKey: request.idempotencyKey,
        executedAt: executedAt.toISOString(),
        network: this.#network,
      };
    });
  }

  async lookup(idempotencyKey: string): Promise<TransferReceipt | undefined> {
    const [first] = await this.executions(idempotencyKey);
    return first?.receipt;
  }

  /** Every recorded execution, oldest first (of one key when given). */
  async executions(idempotencyKey?: string): Promise<RailExecution[]> {
    const { rows } =
      idempotencyKey === undefined
        ? await this.#db.query<RailRow>(LIST_RAIL_EXECUTIONS)
        : await this.#db.query<RailRow>(RAIL_EXECUTIONS_OF_KEY, [idempotencyKey]);
    return rows.map((row) => ({
      idempotencyKey: row.idempotency_key,
      to: row.to_address,
      amount: BigInt(row.amount),
      currency: row.currency,
      decimals: Number(row.decimals),
      receipt: {
        reference: row.reference,
        idempotencyKey: row.idempotency_key,
        executedAt: new Date(Number(row.executed_ms)).toISOString(),
        network: row.network,
      },
    }));
  }
}
