import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type CredentialKind, redactCredentials } from '../../src/audit/index.js';
import { mayContainCredential, scanCredentials } from '../../src/audit/redact-credentials.js';

// Shaped like real credentials, valid for none.
const EXAMPLES: Array<[CredentialKind, string, string]> = [
  [
    'pem_private_key',
    '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----',
    'MIIEowIBAAKCAQEA7',
  ],
  ['aws_access_key_id', 'key AKIAIOSFODNN7EXAMPLE used', 'AKIAIOSFODNN7EXAMPLE'],
  [
    'aws_secret_access_key',
    'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  ],
  [
    'github_token',
    'token ghp_abcdefghijklmnopqrstuvwxyz0123456789 ok',
    'ghp_abcdefghijklmnopqrstuvwxyz0123456789',
  ],
  ['slack_token', 'xoxb-123456789012-abcdefghijkl', 'xoxb-123456789012-abcdefghijkl'],
  [
    'stripe_secret_key',
    'stripe sk_live_abcdefghijklmnopqrstuvwx',
    'sk_live_abcdefghijklmnopqrstuvwx',
  ],
  [
    'anthropic_api_key',
    'sk-ant-api03-abcdefghijklmnopqrstuvwxyz',
    'sk-ant-api03-abcdefghijklmnopqrstuvwxyz',
  ],
  [
    'openai_api_key',
    'OPENAI=sk-proj-abcdefghijklmnopqrstuvwxyz0123',
    'sk-proj-abcdefghijklmnopqrstuvwxyz0123',
  ],
  [
    'google_api_key',
    'AIzaSyA1234567890abcdefghijklmnopqrstuv',
    'AIzaSyA1234567890abcdefghijklmnopqrstuv',
  ],
  ['jwt', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcdefghijklmnop', 'eyJzdWIiOiIxMjM0In0'],
  [
    'bearer_token',
    'Authorization: Bearer abcdefghijklmnopqrstuvwxyz123456',
    'abcdefghijklmnopqrstuvwxyz123456',
  ],
  ['connection_string_password', 'postgres://app:hunter22@db:5432/prod', 'hunter22'],
  ['assigned_secret', 'password=correct-horse-battery', 'correct-horse-battery'],
];

describe('redactCredentials', () => {
  it.each(EXAMPLES)('redacts a %s and names only its kind', (kind, text, secret) => {
    const { text: redacted, kinds } = redactCredentials(text);
    expect(kinds).toContain(kind);
    expect(redacted).not.toContain(secret);
    expect(redacted).toContain(`[REDACTED:${kind}]`);
  });

  it('leaves ordinary text alone', () => {
    for (const text of [
      'The token bucket refills every second.',
      'sk-8 is a part number',
      'Pay $50,000 to Acme (https://acme.example/pay).',
    ]) {
      expect(redactCredentials(text)).toEqual({ text, kinds: [] });
    }
  });

  it('lets every example through its fast pre-check (the pre-check is a superset)', () => {
    for (const [, text] of EXAMPLES) expect(mayContainCredential(text)).toBe(true);
  });

  it('is idempotent and finds nothing the second time (property)', () => {
    const fragment = fc.oneof(fc.string(), fc.constantFrom(...EXAMPLES.map(([, text]) => text)));
    fc.assert(
      fc.property(fc.array(fragment, { maxLength: 6 }), (parts) => {
        const once = redactCredentials(parts.join(' '));
        const twice = redactCredentials(once.text);
        expect(twice.text).toBe(once.text);
        expect(twice.kinds).toEqual([]);
      }),
    );
  });

  it('never skips text the full pattern scan would redact (property)', () => {
    // Examples cut, re-cased and embedded in noise: near-misses exercise the pre-check's edges.
    const mangled = fc
      .tuple(fc.constantFrom(...EXAMPLES.map(([, text]) => text)), fc.nat(), fc.nat(), fc.boolean())
      .map(([text, from, length, upper]) => {
        const start = from % text.length;
        const cut = text.slice(start, start + 1 + (length % text.length));
        return upper ? cut.toUpperCase() : cut;
      });
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string(), mangled), { maxLength: 5 }), (parts) => {
        const text = parts.join('');
        if (scanCredentials(text).kinds.length > 0) expect(mayContainCredential(text)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});
