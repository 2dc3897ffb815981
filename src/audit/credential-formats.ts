/**
 * Every credential format the redactor recognises, as one data table (README *Audit*,
 * "Credential redaction"). The kinds named in `[REDACTED:<kind>]` markers are the kinds of
 * these rows (`CredentialKind`); the prefix rows are the trigger scanner's rules, dispatched on
 * their first two characters (credential-triggers.ts); the other rows name the scanner that
 * reads them. `test/audit/credential-formats.property.test.ts` walks the table: every example
 * is redacted, and so are the variants that must still match (any body of the format's
 * alphabet and length, in any surrounding text). A row the scanner does not honour fails there.
 *
 * Examples are shaped like real credentials and valid for none.
 */
import { ALNUM, DASH, DIGIT, LOWER_HEX_LETTER, TOKEN, WORD } from './credential-text.js';

/** A credential as written in the wild, and the part of it that must disappear. */
export interface CredentialExample {
  readonly text: string;
  readonly secret: string;
}

/**
 * Found by its literal alone: one of `prefixes` (exact case) followed by a run of `alphabet`
 * characters, `minimum` characters in all (and at most `maximum`, when given: a longer run is
 * some other identifier), with no `alphabet` character just before it; when `bodyAlphabet` is
 * given every character after the prefix must be in it.
 */
export interface PrefixFormat {
  readonly kind: string;
  readonly rule: 'prefix';
  readonly prefixes: readonly string[];
  readonly alphabet: number;
  readonly bodyAlphabet?: number;
  readonly minimum: number;
  readonly maximum?: number;
  readonly examples: readonly CredentialExample[];
}

/** Found by the dedicated scanner `rule` names (its file documents the shape it reads). */
export interface ScannedFormat {
  readonly kind: string;
  readonly rule:
    | 'aws_key_id'
    | 'pem'
    | 'putty'
    | 'jwt'
    | 'sendgrid'
    | 'slack_webhook'
    | 'azure'
    | 'authorization'
    | 'userinfo'
    | 'assignment'
    | 'context'
    | 'mnemonic';
  /** Literal prefixes the scanner reads (AWS key ids). */
  readonly prefixes?: readonly string[];
  readonly examples: readonly CredentialExample[];
}

/** One row of {@link CREDENTIAL_FORMATS}. */
export type CredentialFormat = PrefixFormat | ScannedFormat;

const basic = (userAndPassword: string): string => Buffer.from(userAndPassword).toString('base64');
const MNEMONIC = 'legal winner thank year wave sausage worth useful legal winner thank yellow';
const GITHUB_FINE_GRAINED = `github_pat_11ABCDEFG0123456789abcd_${'0123456789abcdefghijABCDEFGHIJ'.repeat(2).slice(0, 59)}`;
const example = (text: string, secret = text): CredentialExample => ({ text, secret });

/** Every credential format; see the module comment. */
export const CREDENTIAL_FORMATS = [
  {
    kind: 'github_token',
    rule: 'prefix',
    prefixes: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'],
    alphabet: WORD,
    minimum: 40,
    examples: [
      example(
        'token ghp_abcdefghijklmnopqrstuvwxyz0123456789 ok',
        'ghp_abcdefghijklmnopqrstuvwxyz0123456789',
      ),
    ],
  },
  {
    // Fine-grained personal access tokens: github_pat_<22 alnum>_<59 alnum>.
    kind: 'github_token',
    rule: 'prefix',
    prefixes: ['github_pat_'],
    alphabet: WORD,
    minimum: 33,
    examples: [example(`GH_TOKEN=${GITHUB_FINE_GRAINED}`, GITHUB_FINE_GRAINED)],
  },
  {
    kind: 'slack_token',
    rule: 'prefix',
    prefixes: ['xoxa-', 'xoxb-', 'xoxp-', 'xoxo-', 'xoxs-', 'xoxr-'],
    alphabet: ALNUM | DASH,
    minimum: 15,
    examples: [example('xoxb-123456789012-abcdefghijkl')],
  },
  {
    kind: 'stripe_secret_key',
    rule: 'prefix',
    prefixes: ['sk_live_', 'sk_test_', 'rk_live_', 'rk_test_'],
    alphabet: WORD,
    minimum: 24,
    examples: [
      example('stripe sk_live_abcdefghijklmnopqrstuvwx', 'sk_live_abcdefghijklmnopqrstuvwx'),
    ],
  },
  {
    kind: 'stripe_webhook_secret',
    rule: 'prefix',
    prefixes: ['whsec_'],
    alphabet: WORD,
    minimum: 30,
    examples: [
      example(
        'STRIPE_WEBHOOK=whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
      ),
    ],
  },
  {
    kind: 'anthropic_api_key',
    rule: 'prefix',
    prefixes: ['sk-ant-'],
    alphabet: TOKEN,
    minimum: 27,
    examples: [example('sk-ant-api03-abcdefghijklmnopqrstuvwxyz')],
  },
  {
    // After sk-ant- (the longest prefix that matches decides the row).
    kind: 'openai_api_key',
    rule: 'prefix',
    prefixes: ['sk-'],
    alphabet: TOKEN,
    minimum: 23,
    examples: [
      example(
        'OPENAI=sk-proj-abcdefghijklmnopqrstuvwxyz0123',
        'sk-proj-abcdefghijklmnopqrstuvwxyz0123',
      ),
    ],
  },
  {
    kind: 'google_api_key',
    rule: 'prefix',
    prefixes: ['AIza'],
    alphabet: TOKEN,
    minimum: 39,
    examples: [example('AIzaSyA1234567890abcdefghijklmnopqrstuv')],
  },
  {
    kind: 'google_oauth_client_secret',
    rule: 'prefix',
    prefixes: ['GOCSPX-'],
    alphabet: TOKEN,
    minimum: 31,
    examples: [
      example(
        '{"client_id":"1234.apps.googleusercontent.com","client_secret":"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"}',
        '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',
      ),
    ],
  },
  {
    kind: 'npm_token',
    rule: 'prefix',
    prefixes: ['npm_'],
    alphabet: WORD,
    bodyAlphabet: ALNUM,
    minimum: 40,
    examples: [
      example(
        '//registry.npmjs.org/:_authToken=npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8',
        'npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8',
      ),
    ],
  },
  {
    kind: 'huggingface_token',
    rule: 'prefix',
    prefixes: ['hf_'],
    alphabet: WORD,
    bodyAlphabet: ALNUM,
    minimum: 33,
    examples: [
      example('HF: hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567', 'hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567'),
    ],
  },
  {
    // Twilio API key SIDs: SK + exactly 32 lower-case hex. (Account SIDs, AC + 32 hex, are
    // identifiers and stay; the auth token beside one is the twilio_auth_token row.)
    kind: 'twilio_api_key',
    rule: 'prefix',
    prefixes: ['SK'],
    alphabet: WORD,
    bodyAlphabet: DIGIT | LOWER_HEX_LETTER,
    minimum: 34,
    maximum: 34,
    examples: [
      example(
        'TWILIO_API_KEY=SK0123456789abcdef0123456789abcdef',
        'SK0123456789abcdef0123456789abcdef',
      ),
      example(
        'sid AC0123456789abcdef0123456789abcdef key SKfedcba9876543210fedcba9876543210',
        'SKfedcba9876543210fedcba9876543210',
      ),
    ],
  },
  {
    kind: 'aws_access_key_id',
    rule: 'aws_key_id',
    prefixes: ['AKIA', 'ASIA', 'AGPA', 'AIDA', 'AROA', 'ANPA', 'ANVA', 'AIPA'],
    examples: [example('key AKIAIOSFODNN7EXAMPLE used', 'AKIAIOSFODNN7EXAMPLE')],
  },
  {
    kind: 'aws_secret_access_key',
    rule: 'context',
    examples: [
      example(
        'id AKIAIOSFODNN7EXAMPLE\nsecret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
        'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      ),
    ],
  },
  {
    kind: 'pem_private_key',
    rule: 'pem',
    examples: [
      example(
        '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----',
        'MIIEowIBAAKCAQEA7',
      ),
      example(
        'key: "-----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\\nAAAAB',
        'b3BlbnNzaC1rZXktdjEAAAAABG5vbmU',
      ),
    ],
  },
  {
    kind: 'putty_private_key',
    rule: 'putty',
    examples: [
      example(
        'PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPublic-Lines: 1\nAAAAC3NzaC1lZDI1NTE5\nPrivate-Lines: 1\nAAAAIGl0J3Mgbm90IGEgcmVhbCBrZXk=\nPrivate-MAC: 4f6a0b1c2d3e',
        'AAAAIGl0J3Mgbm90IGEgcmVhbCBrZXk=',
      ),
    ],
  },
  {
    kind: 'jwt',
    rule: 'jwt',
    examples: [example('eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcdefghijklmnop')],
  },
  {
    kind: 'sendgrid_api_key',
    rule: 'sendgrid',
    examples: [example('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')],
  },
  {
    kind: 'slack_webhook',
    rule: 'slack_webhook',
    examples: [
      example(
        'post to https://hooks.slack.com/services/T0AAAAAAA/B0BBBBBBB/cccccccccccccccccccccccc',
        'T0AAAAAAA/B0BBBBBBB/cccccccccccccccccccccccc',
      ),
    ],
  },
  {
    kind: 'azure_storage_key',
    rule: 'azure',
    examples: [
      example(
        'DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;EndpointSuffix=core.windows.net',
        'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq',
      ),
    ],
  },
  {
    kind: 'azure_sas_token',
    rule: 'azure',
    examples: [
      example(
        'https://acme.blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b&srt=o&sp=r&se=2030-01-01&sig=a8Hd0Ks%2F2LmQ9x1pZtYb7cE3fG4hI5jK6lM%3D',
        'a8Hd0Ks%2F2LmQ9x1pZtYb7cE3fG4hI5jK6lM%3D',
      ),
    ],
  },
  {
    kind: 'bearer_token',
    rule: 'authorization',
    examples: [
      example(
        'Authorization: Bearer abcdefghijklmnopqrstuvwxyz123456',
        'abcdefghijklmnopqrstuvwxyz123456',
      ),
    ],
  },
  {
    kind: 'http_basic_credentials',
    rule: 'authorization',
    examples: [
      example(`Authorization: Basic ${basic('aladdin:opensesame')}`, basic('aladdin:opensesame')),
      example('GET https://bob:s3cr3t-pw@api.example.com/v1', 's3cr3t-pw'),
    ],
  },
  {
    kind: 'connection_string_password',
    rule: 'userinfo',
    examples: [example('postgres://app:hunter22@db:5432/prod', 'hunter22')],
  },
  {
    kind: 'assigned_secret',
    rule: 'assignment',
    examples: [
      example('password=correct-horse-battery', 'correct-horse-battery'),
      example('export TWILIO_AUTH_TOKEN="q1w2e3r4t5y6"', 'q1w2e3r4t5y6'),
      example('X-Api-Key: 5f1d9c2e8a7b', '5f1d9c2e8a7b'),
      // 4+ characters after an unambiguous name; a whole passphrase (assigned-value.ts).
      example('password: hunter2', 'hunter2'),
      example('"password":"hunter2"', 'hunter2'),
      example('passphrase: correct horse battery staple', 'horse battery staple'),
    ],
  },
  {
    kind: 'twilio_auth_token',
    rule: 'context',
    examples: [
      example(
        'account AC0123456789abcdef0123456789abcdef auth 9f8e7d6c5b4a39281706f5e4d3c2b1a0',
        '9f8e7d6c5b4a39281706f5e4d3c2b1a0',
      ),
    ],
  },
  {
    kind: 'hex_private_key',
    rule: 'context',
    examples: [
      example(
        'wallet private key: 4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318',
        '4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318',
      ),
    ],
  },
  {
    kind: 'bip39_mnemonic',
    rule: 'mnemonic',
    examples: [example(`recovery phrase: ${MNEMONIC}`, 'sausage worth useful')],
  },
] as const satisfies readonly CredentialFormat[];

/** The prefix rows, longest prefix first: where two prefixes match, the longer decides. */
export const PREFIX_FORMATS: readonly { prefix: string; format: PrefixFormat }[] =
  CREDENTIAL_FORMATS.flatMap((format): { prefix: string; format: PrefixFormat }[] =>
    format.rule === 'prefix' ? format.prefixes.map((prefix) => ({ prefix, format })) : [],
  ).sort((a, b) => b.prefix.length - a.prefix.length);

/** The literal prefixes a scanned row names (AWS key ids), or none. */
export function prefixesOf(rule: ScannedFormat['rule']): readonly string[] {
  const row = CREDENTIAL_FORMATS.find((format) => format.rule === rule);
  return row && 'prefixes' in row ? row.prefixes : [];
}
