import { currencyDecimals } from '../currencies.js';
import { type Money, toMoney, zeroMoney } from '../money.js';
import { parseMoney } from '../parse-money.js';
import type { BalanceProvider } from '../types.js';

/**
 * Test double: a {@link BalanceProvider} with fixed balances you set (`"1000000.00"` or
 * Money); a currency without one has zero. Counts its calls.
 *
 * @example const balance = new StaticBalanceProvider({ USD: '1000000.00' });
 */
export class StaticBalanceProvider implements BalanceProvider {
  /** How often `getBalance` was called. */
  calls = 0;
  readonly #balances = new Map<string, Money>();
  readonly #currencies: Readonly<Record<string, number>>;

  constructor(
    balances: Readonly<Record<string, string | Money>> = {},
    options: { currencies?: Readonly<Record<string, number>> } = {},
  ) {
    this.#currencies = options.currencies ?? {};
    for (const [currency, amount] of Object.entries(balances)) this.set(currency, amount);
  }

  /** Sets the balance of `currency`. @throws VeridexError `input_invalid` for a malformed amount. */
  set(currency: string, amount: string | Money): this {
    const money =
      typeof amount === 'string'
        ? parseMoney(amount, currency, { currencies: this.#currencies, allowZero: true })
        : toMoney(amount, 'balance');
    this.#balances.set(currency, money);
    return this;
  }

  async getBalance(currency: string): Promise<Money> {
    this.calls += 1;
    const balance = this.#balances.get(currency);
    return balance
      ? { ...balance }
      : zeroMoney(currency, currencyDecimals(currency, this.#currencies));
  }
}
