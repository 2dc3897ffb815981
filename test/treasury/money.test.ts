import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addMoney,
  compareMoney,
  currencyDecimals,
  formatMoney,
  type Money,
  parseMoney,
  toMoney,
} from '../../src/treasury/index.js';

const USD = (amount: bigint): Money => ({ amount, currency: 'USD', decimals: 2 });

function rejection(text: unknown, currency = 'USD'): string {
  try {
    parseMoney(text, currency);
  } catch (error) {
    expect(error).toMatchObject({ code: 'input_invalid' });
    return (error as Error).message;
  }
  throw new Error(`expected ${String(text)} to be rejected`);
}

describe('parseMoney', () => {
  it('parses decimal strings into exact minor units with the currency table', () => {
    expect(parseMoney('50000.00', 'USD')).toEqual(USD(5_000_000n));
    expect(parseMoney('50000', 'USD')).toEqual(USD(5_000_000n));
    expect(parseMoney('0.5', 'USD')).toEqual(USD(50n));
    expect(parseMoney('1500', 'JPY')).toEqual({ amount: 1500n, currency: 'JPY', decimals: 0 });
    expect(parseMoney('1.000001', 'USDC')).toEqual({
      amount: 1_000_001n,
      currency: 'USDC',
      decimals: 6,
    });
    expect(parseMoney('0.000000000000000001', 'ETH')).toEqual({
      amount: 1n,
      currency: 'ETH',
      decimals: 18,
    });
  });

  it('is exact where floats are not', () => {
    // 0.1 + 0.2 in floats is 0.30000000000000004; here it is 30 cents.
    expect(addMoney(parseMoney('0.1', 'USD'), parseMoney('0.2', 'USD'))).toEqual(USD(30n));
    expect(parseMoney('9007199254740993.01', 'USD').amount).toBe(900719925474099301n);
  });

  it('honours explicit decimals and currency overrides', () => {
    expect(parseMoney('10000.000000', 'USD', { decimals: 6 })).toEqual({
      amount: 10_000_000_000n,
      currency: 'USD',
      decimals: 6,
    });
    expect(parseMoney('1.2345', 'XAU', { currencies: { XAU: 4 } }).amount).toBe(12_345n);
    expect(currencyDecimals('JPY', { JPY: 2 })).toBe(2);
  });

  it('says what was expected for each kind of bad amount', () => {
    expect(rejection('1.234')).toMatch(/at most 2 decimals; "1\.234" has 3 decimals/);
    expect(rejection('-5.00')).toMatch(/negative amounts are not allowed/);
    expect(rejection('0')).toMatch(/greater than zero/);
    expect(rejection('0.00')).toMatch(/greater than zero/);
    expect(rejection('5e4')).toMatch(/exponent notation/);
    expect(rejection('1.5E+3')).toMatch(/exponent notation/);
    expect(rejection('50,000.00')).toMatch(/thousands separator/);
    expect(rejection('50 000')).toMatch(/thousands separator/);
    expect(rejection('50_000')).toMatch(/thousands separator/);
    expect(rejection('fifty')).toMatch(/not a plain decimal number/);
    expect(rejection('$50')).toMatch(/not a plain decimal number/);
    expect(rejection('1.2.3')).toMatch(/not a plain decimal number/);
    expect(rejection('.5')).toMatch(/digit before the decimal point/);
    expect(rejection('5.')).toMatch(/ends with a decimal point/);
    expect(rejection('+5')).toMatch(/without a sign/);
    expect(rejection(' 5')).toMatch(/surrounding whitespace/);
    expect(rejection('')).toMatch(/empty string/);
    expect(rejection(50000)).toMatch(/got the number 50000 \(send amounts as strings/);
    expect(rejection(null)).toMatch(/got null/);
    expect(rejection('1'.repeat(81))).toMatch(/81 characters/);
    expect(rejection('1.5', 'JPY')).toMatch(/JPY amount .* like "1250" with at most 0 decimals/);
    expect(rejection('NaN')).toMatch(/not a plain decimal/);
    expect(rejection('Infinity')).toMatch(/not a plain decimal/);
  });

  it('rejects unknown and malformed currencies with the list of known ones', () => {
    expect(rejection('5', 'XYZ')).toMatch(/Unknown currency "XYZ".*USD.*currencies option/);
    expect(rejection('5', 'usd')).toMatch(/Expected a currency code such as "USD"/);
  });

  it('parses any canonical decimal back to the text formatMoney writes (property)', () => {
    const decimals = fc.integer({ min: 0, max: 18 });
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 10n ** 30n }), decimals, (amount, places) => {
        const money: Money = { amount, currency: 'TKN', decimals: places };
        const text = formatMoney(money);
        expect(text).toMatch(places === 0 ? /^\d+$/ : new RegExp(`^\\d+\\.\\d{${places}}$`));
        expect(parseMoney(text, 'TKN', { decimals: places })).toEqual(money);
      }),
    );
  });

  it('reads every shorter fraction as the same amount padded with zeros (property)', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 15n }),
        fc.stringMatching(/^\d{0,6}$/),
        (whole, fraction) => {
          const text = fraction === '' ? `${whole}` : `${whole}.${fraction}`;
          const expected = BigInt(`${whole}${fraction.padEnd(6, '0')}`);
          if (expected === 0n) return;
          expect(parseMoney(text, 'USDC').amount).toBe(expected);
        },
      ),
    );
  });

  it('rejects every string that is not a plain positive decimal within the decimals (property)', () => {
    const candidate = fc.oneof(
      fc.string(),
      fc.stringMatching(/^[-+]?\d{1,4}([.,_ ]\d{1,4}){0,3}([eE][-+]?\d{1,2})?$/),
      fc.double().map(String),
    );
    fc.assert(
      fc.property(candidate, (text) => {
        const plain = /^\d+(\.\d{1,2})?$/.test(text) && /[1-9]/.test(text);
        if (plain) {
          expect(parseMoney(text, 'USD').currency).toBe('USD');
        } else {
          expect(() => parseMoney(text, 'USD')).toThrow(
            expect.objectContaining({ code: 'input_invalid' }),
          );
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('formatMoney', () => {
  it('writes plain decimals with exactly the currency decimals', () => {
    expect(formatMoney(USD(5_000_000n))).toBe('50000.00');
    expect(formatMoney(USD(5n))).toBe('0.05');
    expect(formatMoney(USD(-5n))).toBe('-0.05');
    expect(formatMoney({ amount: 1500n, currency: 'JPY', decimals: 0 })).toBe('1500');
    expect(formatMoney(USD(123n), { withCurrency: true })).toBe('1.23 USD');
  });
});

describe('Money arithmetic', () => {
  it('compares and adds exactly across decimals of one currency', () => {
    const six = { amount: 10_000_000_000n, currency: 'USD', decimals: 6 };
    expect(compareMoney(six, USD(1_000_000n))).toBe(0);
    expect(compareMoney(USD(1n), six)).toBe(-1);
    expect(addMoney(six, USD(1n))).toEqual({
      amount: 10_000_010_000n,
      currency: 'USD',
      decimals: 6,
    });
  });

  it('never combines two currencies', () => {
    expect(() => compareMoney(USD(1n), { amount: 1n, currency: 'EUR', decimals: 2 })).toThrow(
      expect.objectContaining({ code: 'input_invalid' }),
    );
  });

  it('accepts providers that send minor units as integer strings, and nothing looser', () => {
    expect(toMoney({ amount: '1000000000000', currency: 'USD', decimals: 6 }, 'balance')).toEqual({
      amount: 1_000_000_000_000n,
      currency: 'USD',
      decimals: 6,
    });
    for (const bad of [
      { amount: 10.5, currency: 'USD', decimals: 2 },
      { amount: '10.50', currency: 'USD', decimals: 2 },
      { amount: 1n, currency: 'USD', decimals: 2.5 },
      null,
    ]) {
      expect(() => toMoney(bad, 'balance')).toThrow(
        expect.objectContaining({ code: 'input_invalid' }),
      );
    }
  });
});
