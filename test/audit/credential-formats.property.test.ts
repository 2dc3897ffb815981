import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CREDENTIAL_FORMATS, type PrefixFormat } from '../../src/audit/credential-formats.js';
import { has } from '../../src/audit/credential-text.js';
import { redactCredentials } from '../../src/audit/redact-credentials.js';

// Every row of the table, as a leak would show it: its examples in any surrounding text, and
// for a prefix format any token of its alphabet and length. A row the scanner does not honour
// (a new vendor format, a dispatch that never reaches a prefix) fails here.

const alphabetOf = (mask: number): string[] =>
  Array.from({ length: 128 }, (_, code) => String.fromCharCode(code)).filter((char) =>
    has(char.charCodeAt(0), mask),
  );

// Text a credential is found in: log lines, assignments, JSON strings, quotes, brackets.
const before = fc.constantFrom('', ' ', 'log: ', '\n', 'key=', '{"text":"', "'", '(', '`');
const after = fc.constantFrom('', ' ', ' ok', '\n', '"}', "'", ')', ',', ';', '`');

function expectRedacted(text: string, secret: string, kind: string): void {
  const { text: redacted, kinds } = redactCredentials(text);
  expect(redacted, text).not.toContain(secret);
  expect(kinds, text).toContain(kind);
  expect(redacted).toContain(`[REDACTED:${kind}]`);
  // Idempotent: a second pass finds nothing.
  expect(redactCredentials(redacted)).toEqual({ text: redacted, kinds: [] });
}

describe('CREDENTIAL_FORMATS: every format is redacted wherever it appears', () => {
  for (const format of CREDENTIAL_FORMATS) {
    for (const { text, secret } of format.examples) {
      it(`${format.kind}: ${text.slice(0, 40)} in any surrounding text`, () => {
        expectRedacted(text, secret, format.kind);
        fc.assert(
          fc.property(before, after, (head, tail) => {
            expectRedacted(head + text + tail, secret, format.kind);
          }),
          { numRuns: 60 },
        );
      });
    }
  }

  const prefixFormats = CREDENTIAL_FORMATS.filter(
    (format): format is Extract<(typeof CREDENTIAL_FORMATS)[number], PrefixFormat> =>
      format.rule === 'prefix',
  ) as readonly PrefixFormat[];
  for (const format of prefixFormats) {
    it(`${format.kind} (${format.prefixes.join(', ')}): any body of its alphabet and length`, () => {
      const body = alphabetOf(format.bodyAlphabet ?? format.alphabet);
      fc.assert(
        fc.property(
          fc.constantFrom(...format.prefixes),
          fc.array(fc.constantFrom(...body), { minLength: 0, maxLength: 60 }),
          before,
          after,
          (prefix, extra, head, tail) => {
            // At least the minimum, drawn from the body alphabet (its first characters are
            // letters and digits, so no generated body ends in a separator by accident).
            const filler = body.filter((char) => /[A-Za-z0-9]/.test(char));
            const room = (format.maximum ?? Number.POSITIVE_INFINITY) - prefix.length;
            const kept = extra.slice(0, room);
            const needed = Math.max(0, format.minimum - prefix.length - kept.length);
            const token = `${prefix}${kept.join('')}${filler.slice(0, 1).join('').repeat(needed)}`;
            const tailSafe = /[A-Za-z0-9_-]$/.test(token) ? tail : ` ${tail}`;
            expectRedacted(head + token + tailSafe, token, format.kind);
          },
        ),
        { numRuns: 200 },
      );
    });
  }

  it('has a row for every kind a marker can name, and an example for every row', () => {
    const kinds = new Set(CREDENTIAL_FORMATS.map((format) => format.kind));
    expect(kinds.size).toBe(27);
    for (const format of CREDENTIAL_FORMATS) expect(format.examples.length).toBeGreaterThan(0);
  });

  it('redacts a GitHub fine-grained token in its real format: github_pat_<22>_<59>', () => {
    const alnum = 'A1b2C3d4E5f6G7h8I9j0K1x9Y8w7V6u5T4s3R2q1P0o9N8m7L6k5J4i3H2g1F0e9D8';
    const token = `github_pat_${alnum.slice(0, 22)}_${alnum.slice(0, 59)}`;
    expect(token).toHaveLength(93);
    expect(redactCredentials(`auth ${token} end`).text).toBe('auth [REDACTED:github_token] end');
  });

  it('redacts a Twilio API key SK<32 hex> but not an Account SID, nor a longer or upper-case run', () => {
    const hex = '0123456789abcdef0123456789abcdef';
    expect(redactCredentials(`key SK${hex}.`).text).toBe('key [REDACTED:twilio_api_key].');
    for (const text of [
      `account AC${hex} ok`, // an identifier, not a secret
      `SK${hex}0`, // 33 hex: some other identifier
      `SK${hex.toUpperCase()}`,
      `xSK${hex}`, // not word-bounded
      `SK${hex.slice(1)}`, // 31 hex
    ]) {
      expect(redactCredentials(text), text).toEqual({ text, kinds: [] });
    }
  });
});
