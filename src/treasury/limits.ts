import { VeridexError } from '../errors/index.js';
import { currencyDecimals } from './currencies.js';
import { type Money, toMoney } from './money.js';
import { parseMoney } from './parse-money.js';

/** Limits per currency: decimal strings (`{ USD: '10000.00' }`) or Money values. */
export type LimitSpec = Readonly<Record<string, string | Money>>;

/**
 * Reads a per-currency limit table from configuration into exact Money, in each currency's
 * decimals (a Money with more decimals is scaled down when that is exact, e.g. the seed's
 * `{ amount: 10000000000n, decimals: 6 }` USD becomes `10000.00`).
 *
 * @throws VeridexError `config_invalid` naming the entry (`policy.dailyLimit.USD`) and what was expected.
 */
export function readLimits(
  spec: LimitSpec | undefined,
  name: string,
  currencies: Readonly<Record<string, number>>,
): ReadonlyMap<string, Money> {
  const limits = new Map<string, Money>();
  for (const [currency, value] of Object.entries(spec ?? {})) {
    const field = `${name}.${currency}`;
    try {
      const decimals = currencyDecimals(currency, currencies);
      const money =
        typeof value === 'string'
          ? parseMoney(value, currency, { decimals, allowZero: true })
          : toMoney(value, field);
      if (money.currency !== currency) {
        throw new VeridexError(
          'config_invalid',
          `${field} is in ${money.currency}, not ${currency}.`,
        );
      }
      if (money.amount < 0n) throw new VeridexError('config_invalid', `${field} is negative.`);
      limits.set(currency, scaleDown(money, decimals));
    } catch (error) {
      if (VeridexError.is(error, 'config_invalid')) throw error;
      const why = error instanceof Error ? error.message : String(error);
      throw new VeridexError('config_invalid', `Treasury kit option ${field} is invalid: ${why}`, {
        cause: error,
      });
    }
  }
  return limits;
}

function scaleDown(money: Money, decimals: number): Money {
  if (money.decimals <= decimals) return money;
  const factor = 10n ** BigInt(money.decimals - decimals);
  return money.amount % factor === 0n
    ? { ...money, amount: money.amount / factor, decimals }
    : money;
}
