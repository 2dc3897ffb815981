import { VeridexError } from '../errors/index.js';
import { currencyDecimals, describe } from './currencies.js';
import type { Money } from './money.js';

/** Options for {@link parseMoney}. */
export interface ParseMoneyOptions {
  /** Decimals of the currency (default: from `currencies`, then the built-in table). */
  decimals?: number;
  /** Currency table overrides, e.g. `{ XAU: 4 }`. */
  currencies?: Readonly<Record<string, number>>;
  /** Accept `"0"` (limits may be zero; transfer amounts may not). Default false. */
  allowZero?: boolean;
}

/** Longest amount text accepted (digits and point): beyond any real balance, short of abuse. */
const MAX_LENGTH = 80;
const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/**
 * Parses a decimal amount written by a model or a person — `"50000.00"` USD — into exact
 * minor units, without ever going through a float. Accepted: digits with an optional
 * fraction of at most the currency's decimals (`"50000"`, `"50000.5"`, `"50000.50"`).
 * Rejected, each with a message saying what was expected: non-strings (a JSON number is
 * already a float), empty text, signs, zero, more decimals than the currency has,
 * exponents (`"5e4"`), thousands separators (`"50,000"`, `"50 000"`, `"50_000"`), and
 * anything else non-numeric (`"$50"`, `"fifty"`, `"1.2.3"`, `".5"`, `"5."`).
 *
 * @throws VeridexError `input_invalid` (details.field `amount` or `currency`).
 * @example parseMoney('50000.00', 'USD') // { amount: 5000000n, currency: 'USD', decimals: 2 }
 */
export function parseMoney(
  text: unknown,
  currency: string,
  options: ParseMoneyOptions = {},
): Money {
  const decimals = options.decimals ?? currencyDecimals(currency, options.currencies);
  if (!Number.isInteger(decimals) || decimals < 0) {
    throw new VeridexError(
      'config_invalid',
      `decimals must be a non-negative integer; got ${decimals}.`,
    );
  }
  const example = decimals > 0 ? `"1250.${'5'.padEnd(decimals, '0')}"` : '"1250"';
  const expected = `Expected a ${currency} amount as a decimal string like ${example} with at most ${decimals} decimal${decimals === 1 ? '' : 's'}`;
  const reject = (why: string): never => {
    throw new VeridexError('input_invalid', `${expected}; ${why}.`, {
      details: { field: 'amount', currency, decimals },
    });
  };
  if (typeof text !== 'string') {
    return reject(
      `got ${describe(text)}${typeof text === 'number' ? ' (send amounts as strings: numbers are floats)' : ''}`,
    );
  }
  if (text.length === 0) return reject('got an empty string');
  if (text.length > MAX_LENGTH) return reject(`got ${text.length} characters`);
  const match = DECIMAL.exec(text);
  if (!match) return reject(whyNotDecimal(text));
  const fraction = match[2] ?? '';
  if (fraction.length > decimals) {
    return reject(`${describe(text)} has ${fraction.length} decimals`);
  }
  const amount = BigInt(`${match[1]}${fraction.padEnd(decimals, '0')}`);
  if (amount === 0n && !options.allowZero) return reject('the amount must be greater than zero');
  return { amount, currency, decimals };
}

function whyNotDecimal(text: string): string {
  if (/^\s|\s$/.test(text)) return `${describe(text)} has surrounding whitespace`;
  if (text.startsWith('-')) return 'negative amounts are not allowed';
  if (text.startsWith('+')) return 'write the amount without a sign';
  if (/^[\d.]*\d[eE][+-]?\d+$/.test(text)) return `${describe(text)} uses exponent notation`;
  if (/^\d{1,3}([,_ '’]\d{3})+(\.\d+)?$/.test(text) || /\d[,_ '’]\d/.test(text)) {
    return `${describe(text)} contains a thousands separator`;
  }
  if (/^\.\d+$/.test(text)) return `${describe(text)} needs a digit before the decimal point`;
  if (/^\d+\.$/.test(text)) return `${describe(text)} ends with a decimal point`;
  return `${describe(text)} is not a plain decimal number`;
}
