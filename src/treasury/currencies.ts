import { VeridexError } from '../errors/index.js';

/**
 * Decimals (minor-unit exponent) of the currencies the kit knows without configuration:
 * ISO 4217 for fiat (JPY and KRW have none), the issuers' published decimals for tokens.
 * Override or extend it with the kit's `currencies` option.
 */
export const DEFAULT_CURRENCIES: Readonly<Record<string, number>> = Object.freeze({
  USD: 2,
  EUR: 2,
  GBP: 2,
  CHF: 2,
  CAD: 2,
  AUD: 2,
  SGD: 2,
  HKD: 2,
  CNY: 2,
  INR: 2,
  BRL: 2,
  MXN: 2,
  JPY: 0,
  KRW: 0,
  BTC: 8,
  USDC: 6,
  USDT: 6,
  EURC: 6,
  SOL: 9,
  ETH: 18,
  DAI: 18,
});

/** Currency codes: 3–10 upper-case letters or digits, starting with a letter (ISO 4217 and token tickers). */
export const CURRENCY_CODE = /^[A-Z][A-Z0-9]{2,9}$/;

/** Largest number of decimals the kit accepts for a currency (ETH-style tokens use 18). */
export const MAX_DECIMALS = 36;

/**
 * The decimals of `currency`: from `overrides` first, then {@link DEFAULT_CURRENCIES}.
 *
 * @throws VeridexError `input_invalid` for a malformed or unknown currency code (the message
 *   lists the known codes), `config_invalid` for an override that is not an integer 0–36.
 * @example currencyDecimals('JPY') // 0
 */
export function currencyDecimals(
  currency: unknown,
  overrides: Readonly<Record<string, number>> = {},
): number {
  if (typeof currency !== 'string' || !CURRENCY_CODE.test(currency)) {
    throw new VeridexError(
      'input_invalid',
      `Expected a currency code such as "USD" (upper-case letters and digits); got ${describe(currency)}.`,
      { details: { field: 'currency' } },
    );
  }
  const decimals = Object.hasOwn(overrides, currency)
    ? overrides[currency]
    : Object.hasOwn(DEFAULT_CURRENCIES, currency)
      ? DEFAULT_CURRENCIES[currency]
      : undefined;
  if (decimals === undefined) {
    const known = [...new Set([...Object.keys(overrides), ...Object.keys(DEFAULT_CURRENCIES)])];
    throw new VeridexError(
      'input_invalid',
      `Unknown currency "${currency}". Known currencies: ${known.sort().join(', ')}. Add it with the kit's currencies option ({ ${currency}: <decimals> }).`,
      { details: { field: 'currency', currency } },
    );
  }
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > MAX_DECIMALS) {
    throw new VeridexError(
      'config_invalid',
      `Currency "${currency}" is configured with ${String(decimals)} decimals; expected an integer from 0 to ${MAX_DECIMALS}.`,
    );
  }
  return decimals;
}

/** A short, safe description of an untrusted value for error messages. */
export function describe(value: unknown): string {
  if (typeof value === 'string') {
    const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value;
    return JSON.stringify(shown);
  }
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `the ${typeof value} ${String(value)}`;
}
