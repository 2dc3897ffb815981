import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type CredentialKind, redactCredentials } from '../../src/audit/index.js';
import { ORDINARY_TEXT } from './fixtures/ordinary-text.js';

const basic = (userAndPassword: string) => Buffer.from(userAndPassword).toString('base64');
const MNEMONIC = 'legal winner thank year wave sausage worth useful legal winner thank yellow';

// Shaped like real credentials, valid for none: [kind, text, the part that must disappear].
const EXAMPLES: Array<[CredentialKind, string, string]> = [
  [
    'pem_private_key',
    '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----',
    'MIIEowIBAAKCAQEA7',
  ],
  [
    'pem_private_key',
    'key: "-----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\\nAAAAB', // truncated, JSON-escaped
    'b3BlbnNzaC1rZXktdjEAAAAABG5vbmU',
  ],
  [
    'putty_private_key',
    'PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPublic-Lines: 1\nAAAAC3NzaC1lZDI1NTE5\nPrivate-Lines: 1\nAAAAIGl0J3Mgbm90IGEgcmVhbCBrZXk=\nPrivate-MAC: 4f6a0b1c2d3e',
    'AAAAIGl0J3Mgbm90IGEgcmVhbCBrZXk=',
  ],
  ['aws_access_key_id', 'key AKIAIOSFODNN7EXAMPLE used', 'AKIAIOSFODNN7EXAMPLE'],
  [
    'aws_secret_access_key',
    'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  ],
  [
    'aws_secret_access_key',
    'id AKIAIOSFODNN7EXAMPLE\nsecret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  ],
  [
    'github_token',
    'token ghp_abcdefghijklmnopqrstuvwxyz0123456789 ok',
    'ghp_abcdefghijklmnopqrstuvwxyz0123456789',
  ],
  ['slack_token', 'xoxb-123456789012-abcdefghijkl', 'xoxb-123456789012-abcdefghijkl'],
  [
    'slack_webhook',
    'post to https://hooks.slack.com/services/T0AAAAAAA/B0BBBBBBB/cccccccccccccccccccccccc',
    'T0AAAAAAA/B0BBBBBBB/cccccccccccccccccccccccc',
  ],
  [
    'stripe_secret_key',
    'stripe sk_live_abcdefghijklmnopqrstuvwx',
    'sk_live_abcdefghijklmnopqrstuvwx',
  ],
  [
    'stripe_webhook_secret',
    'STRIPE_WEBHOOK=whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
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
  [
    'google_oauth_client_secret',
    '{"client_id":"1234.apps.googleusercontent.com","client_secret":"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"}',
    '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',
  ],
  [
    'azure_storage_key',
    'DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;EndpointSuffix=core.windows.net',
    'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq',
  ],
  [
    'azure_sas_token',
    'https://acme.blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b&srt=o&sp=r&se=2030-01-01&sig=a8Hd0Ks%2F2LmQ9x1pZtYb7cE3fG4hI5jK6lM%3D',
    'a8Hd0Ks%2F2LmQ9x1pZtYb7cE3fG4hI5jK6lM%3D',
  ],
  [
    'http_basic_credentials',
    `Authorization: Basic ${basic('aladdin:opensesame')}`,
    basic('aladdin:opensesame'),
  ],
  ['http_basic_credentials', 'GET https://bob:s3cr3t-pw@api.example.com/v1', 's3cr3t-pw'],
  [
    'npm_token',
    '//registry.npmjs.org/:_authToken=npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8',
    'npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8',
  ],
  [
    'huggingface_token',
    'HF: hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567',
    'hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567',
  ],
  [
    'sendgrid_api_key',
    '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',
    'TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr',
  ],
  [
    'twilio_auth_token',
    'account AC0123456789abcdef0123456789abcdef auth 9f8e7d6c5b4a39281706f5e4d3c2b1a0',
    '9f8e7d6c5b4a39281706f5e4d3c2b1a0',
  ],
  [
    'hex_private_key',
    'wallet private key: 4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318',
    '4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318',
  ],
  [
    'hex_private_key',
    'signer key 0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318',
    '4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318',
  ],
  ['bip39_mnemonic', `recovery phrase: ${MNEMONIC}`, 'sausage worth useful'],
  ['jwt', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcdefghijklmnop', 'eyJzdWIiOiIxMjM0In0'],
  [
    'bearer_token',
    'Authorization: Bearer abcdefghijklmnopqrstuvwxyz123456',
    'abcdefghijklmnopqrstuvwxyz123456',
  ],
  ['connection_string_password', 'postgres://app:hunter22@db:5432/prod', 'hunter22'],
  ['assigned_secret', 'password=correct-horse-battery', 'correct-horse-battery'],
  ['assigned_secret', 'export TWILIO_AUTH_TOKEN="q1w2e3r4t5y6"', 'q1w2e3r4t5y6'],
  ['assigned_secret', 'X-Api-Key: 5f1d9c2e8a7b', '5f1d9c2e8a7b'],
];

describe('redactCredentials', () => {
  it.each(EXAMPLES)('redacts a %s and names only its kind', (kind, text, secret) => {
    const { text: redacted, kinds } = redactCredentials(text);
    expect(kinds).toContain(kind);
    expect(redacted).not.toContain(secret);
    expect(redacted).toContain(`[REDACTED:${kind}]`);
  });

  it('keeps the name of what it redacts where the name comes first', () => {
    expect(redactCredentials('postgres://app:hunter22@db/prod').text).toBe(
      'postgres://app:[REDACTED:connection_string_password]@db/prod',
    );
    expect(redactCredentials('Authorization: Bearer abcdefghijklmnopqrstuvwxyz123456').text).toBe(
      'Authorization: Bearer [REDACTED:bearer_token]',
    );
    expect(
      redactCredentials('https://hooks.slack.com/services/T0AAAAAAA/B0BBBBBBB/cccccccccccc').text,
    ).toBe('https://hooks.slack.com/services/[REDACTED:slack_webhook]');
  });

  it.each(ORDINARY_TEXT.map((text) => [text]))('leaves ordinary text alone: %s', (text) => {
    expect(redactCredentials(text)).toEqual({ text, kinds: [] });
  });

  it('needs twelve mnemonic words: eleven wordlist words in a row are prose', () => {
    const eleven = MNEMONIC.split(' ').slice(0, 11).join(' ');
    expect(redactCredentials(`${eleven}.`).kinds).toEqual([]);
    expect(redactCredentials(`1. ${MNEMONIC.split(' ').join('\n2. ')}`).kinds).toEqual([
      'bip39_mnemonic',
    ]);
  });

  it('needs context for shapes that hashes share: 40 base64, 64 hex and 32 hex characters', () => {
    const forty = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
    const hex64 = '4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318';
    const hex32 = '9f8e7d6c5b4a39281706f5e4d3c2b1a0';
    expect(redactCredentials(`checksum ${forty} ${hex64} ${hex32}`).kinds).toEqual([]);
    // Context further away than the window does not count either.
    expect(redactCredentials(`aws ${'.'.repeat(150)} ${forty}`).kinds).toEqual([]);
  });

  it('finds a credential after a megabyte of text that looks almost like one', () => {
    const prefix = 'eyJ-'.repeat(50_000) + '\u0090'.repeat(10_000) + 'a-'.repeat(20_000);
    const { text, kinds } = redactCredentials(`${prefix} postgres://app:hunter22@db`);
    expect(kinds).toEqual(['connection_string_password']);
    expect(text.endsWith('app:[REDACTED:connection_string_password]@db')).toBe(true);
  });

  it('is idempotent and finds nothing the second time (property)', () => {
    const fragment = fc.oneof(
      fc.string(),
      fc.constantFrom(...EXAMPLES.map(([, text]) => text)),
      fc.constantFrom(...ORDINARY_TEXT),
      fc.constantFrom(
        '[REDACTED',
        ']',
        'aws',
        'key ',
        'private key ',
        '0x',
        'AC',
        'Basic ',
        '://',
        '@',
        ':',
        '=',
      ),
    );
    fc.assert(
      fc.property(
        fc.array(fragment, { maxLength: 8 }),
        fc.constantFrom('', ' ', '\n', '='),
        (parts, glue) => {
          const once = redactCredentials(parts.join(glue));
          const twice = redactCredentials(once.text);
          expect(twice.text).toBe(once.text);
          expect(twice.kinds).toEqual([]);
        },
      ),
      {
        numRuns: 3000,
        // Found by this property: a credential found later ended or cut a run an earlier rule read.
        examples: [
          [['AKIAIOSFODNN7EXAMPLE', 'Private-Lines: 1\n'], ''],
          [[`${MNEMONIC}`, 'Private-Lines: 1\n'], ''],
          [
            [
              'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
              'postgres://app:hunter22@db:5432/prod',
              '(',
            ],
            '',
          ],
          [
            [
              '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----',
              'sk-ant-api03-abcdefghijklmnopqrstuvwxyz',
            ],
            '',
          ],
          // A hex key redacted between a Twilio id and a token shortened the distance, so the
          // second pass found the token in range: windows are now measured in redacted text.
          [
            [
              'account AC0123456789abcdef0123456789abcdef auth 9f8e7d6c5b4a39281706f5e4d3c2b1a0',
              'wallet private key: 4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318',
              'Twilio is a vendor. Our order number is 1234567890abcdef1234567890abcdef.',
            ],
            '\n',
          ],
          // "private key" inside a redacted mnemonic stayed context (and out of order), which
          // hid the "key" before the 0x key from the first pass.
          [
            [
              'recovery phrase: legal winner thank year wave sausage worth useful legal winner thank yellow',
              'private key ',
              'Basic ',
              'signer key 0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318',
            ],
            ' ',
          ],
          // The context an AWS key id's marker keeps, after that marker.
          [
            [
              'key AKIAIOSFODNN7EXAMPLE used',
              'wallet private key: 4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318',
              'Our AWS bill went up: see the 40-character report id below.\nreport: ZXhhbXBsZSByZXBvcnQgaWRlbnRpZmllciAwMDAx',
            ],
            '',
          ],
        ],
      },
    );
  });

  it('measures context windows in the redacted text, whatever lies between', () => {
    const id = 'AC0123456789abcdef0123456789abcdef';
    const token = '9f8e7d6c5b4a39281706f5e4d3c2b1a0';
    const hexKey = '4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318';
    // 101 characters from the id to the token: out of range, with or without a key between.
    const far = redactCredentials(`${id}${' '.repeat(101)}${token}`);
    expect(far.kinds).toEqual([]);
    // A redacted key between them is 26 characters once redacted, not 64: the token is
    // 13 + 26 + 45 = 84 characters after the id in the redacted text, so it is redacted now.
    const text = `${id} private key ${hexKey}${' '.repeat(45)}${token}`;
    expect(text.indexOf(token) - text.indexOf(id) - id.length).toBeGreaterThan(100);
    const once = redactCredentials(text);
    expect(once.text).toBe(
      `${id} private key [REDACTED:hex_private_key]${' '.repeat(45)}[REDACTED:twilio_auth_token]`,
    );
    expect(redactCredentials(once.text).kinds).toEqual([]);
  });

  it('leaves any mix of ordinary text unchanged (property)', () => {
    const hex = (length: number) =>
      fc.string({
        unit: fc.constantFrom(...'0123456789abcdef'),
        minLength: length,
        maxLength: length,
      });
    const ordinary = fc.oneof(
      fc.constantFrom(...ORDINARY_TEXT),
      fc.uuid(),
      hex(40).map((sha) => `commit ${sha}`),
      hex(64).map((sha) => `sha256:${sha}`),
      fc.lorem({ maxCount: 12 }),
      fc
        .base64String({ minLength: 4, maxLength: 200 })
        .map((data) => `data:image/png;base64,${data}`),
      fc.jsonValue({ maxDepth: 2 }).map((value) => JSON.stringify(value)),
    );
    fc.assert(
      fc.property(fc.array(ordinary, { maxLength: 6 }), (parts) => {
        const text = parts.join('\n');
        expect(redactCredentials(text)).toEqual({ text, kinds: [] });
      }),
      { numRuns: 1500 },
    );
  });

  it('redacts every credential wherever it is planted in ordinary text (property)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...EXAMPLES),
        fc.constantFrom(...ORDINARY_TEXT),
        fc.constantFrom(...ORDINARY_TEXT),
        ([kind, credential, secret], before, after) => {
          const { text, kinds } = redactCredentials(`${before}\n${credential}\n${after}`);
          expect(text).not.toContain(secret);
          expect(kinds).toContain(kind);
        },
      ),
      { numRuns: 800 },
    );
  });
});
