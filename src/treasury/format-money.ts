import type { Money, MoneyJson } from './money.js';

/**
 * Formats money as a plain decimal string with exactly `decimals` fraction digits — the
 * format {@link parseMoney} reads back: `{ amount: 5000000n, currency: 'USD', decimals: 2 }`
 * → `"50000.00"`. No thousands separators, no currency symbol; with `withCurrency` the code
 * follows after a space (`"50000.00 USD"`), for people.
 *
 * @example formatMoney({ amount: 1500n, currency: 'JPY', decimals: 0 }) // "1500"
 */
export function formatMoney(money: Money, options: { withCurrency?: boolean } = {}): string {
  const negative = money.amount < 0n;
  const digits = (negative ? -money.amount : money.amount)
    .toString()
    .padStart(money.decimals + 1, '0');
  const whole = digits.slice(0, digits.length - money.decimals);
  const fraction = money.decimals > 0 ? `.${digits.slice(digits.length - money.decimals)}` : '';
  const text = `${negative ? '-' : ''}${whole}${fraction}`;
  return options.withCurrency ? `${text} ${money.currency}` : text;
}

/** The JSON form of money for audit events and tool output. */
export function moneyJson(money: Money): MoneyJson {
  return {
    amount: formatMoney(money),
    currency: money.currency,
    minorUnits: money.amount.toString(),
    decimals: money.decimals,
  };
}
