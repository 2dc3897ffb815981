import { VeridexError } from '../errors/index.js';
import { MAX_DECIMALS } from './currencies.js';

/** An exact amount of money: `amount` minor units (cents, wei, …) of `currency` with `decimals`. Never a float. */
export interface Money {
  amount: bigint;
  currency: string;
  decimals: number;
}

/** Money as it appears in audit events and tool output (JSON has no bigint). */
export interface MoneyJson {
  /** Plain decimal string, e.g. `"50000.00"`. */
  amount: string;
  currency: string;
  /** The amount in minor units, as an integer string. */
  minorUnits: string;
  decimals: number;
}

/**
 * Checks and copies a Money value; providers may return `amount` as an integer string of
 * minor units (JSON APIs have no bigint).
 *
 * @throws VeridexError `input_invalid` naming `what` when the value is not a well-formed Money.
 * @example toMoney({ amount: '1000000000000', currency: 'USD', decimals: 6 }, 'balance')
 */
export function toMoney(value: unknown, what: string): Money {
  const record = (typeof value === 'object' && value !== null ? value : {}) as Record<
    string,
    unknown
  >;
  const { amount, currency, decimals } = record;
  const units =
    typeof amount === 'bigint'
      ? amount
      : typeof amount === 'string' && /^-?\d{1,80}$/.test(amount)
        ? BigInt(amount)
        : undefined;
  if (
    units === undefined ||
    typeof currency !== 'string' ||
    currency.length === 0 ||
    !Number.isInteger(decimals) ||
    (decimals as number) < 0 ||
    (decimals as number) > MAX_DECIMALS
  ) {
    throw new VeridexError(
      'input_invalid',
      `Expected ${what} as { amount: bigint (minor units), currency, decimals: 0–${MAX_DECIMALS} }; got something else.`,
      { details: { field: what } },
    );
  }
  return { amount: units, currency, decimals: decimals as number };
}

/** `money` expressed with `decimals` (more decimals only: exact). */
export function rescale(money: Money, decimals: number): bigint {
  if (decimals < money.decimals) {
    throw new RangeError(`cannot rescale ${money.decimals} decimals down to ${decimals}`);
  }
  return money.amount * 10n ** BigInt(decimals - money.decimals);
}

/**
 * Compares two amounts of the same currency exactly, whatever their decimals.
 * @throws VeridexError `input_invalid` when the currencies differ.
 * @example compareMoney(a, b) < 0 // a is less than b
 */
export function compareMoney(left: Money, right: Money): -1 | 0 | 1 {
  sameCurrency(left, right);
  const decimals = Math.max(left.decimals, right.decimals);
  const a = rescale(left, decimals);
  const b = rescale(right, decimals);
  return a === b ? 0 : a > b ? 1 : -1;
}

/**
 * The sum of two amounts of the same currency, with the larger number of decimals.
 * @throws VeridexError `input_invalid` when the currencies differ.
 */
export function addMoney(left: Money, right: Money): Money {
  sameCurrency(left, right);
  const decimals = Math.max(left.decimals, right.decimals);
  return {
    amount: rescale(left, decimals) + rescale(right, decimals),
    currency: left.currency,
    decimals,
  };
}

/** `right` subtracted from `left` (same currency; may be negative). */
export function subtractMoney(left: Money, right: Money): Money {
  return addMoney(left, { ...right, amount: -right.amount });
}

/** Zero of `currency`. */
export function zeroMoney(currency: string, decimals: number): Money {
  return { amount: 0n, currency, decimals };
}

function sameCurrency(left: Money, right: Money): void {
  if (left.currency !== right.currency) {
    throw new VeridexError(
      'input_invalid',
      `Cannot combine ${left.currency} with ${right.currency}: amounts of different currencies are never converted implicitly.`,
    );
  }
}
