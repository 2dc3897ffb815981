import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { redactCredentials } from '../../src/audit/redact-credentials.js';

const MARK = '[REDACTED:assigned_secret]';

// Attacks on the assignment rule (README *Audit*, "Credential redaction"): a short password
// after an unambiguous name, and a passphrase of several words.
describe('assigned secrets: short values and passphrases', () => {
  it.each([
    ['password: hunter2', `password: ${MARK}`],
    ['"password":"hunter2"', `"password":"${MARK}"`],
    ["{'passwd': 'abcd'}", `{'passwd': '${MARK}'}`],
    ['DB_PWD=s3cr', `DB_PWD=${MARK}`],
    ['client_secret = 1a2b3', `client_secret = ${MARK}`],
    ['X-Api-Key: k3y5', `X-Api-Key: ${MARK}`],
    ['api_key=abc123', `api_key=${MARK}`],
    ['auth_token: t0k3n', `auth_token: ${MARK}`],
    ['password: 1234', `password: ${MARK}`],
  ])('redacts the short value in %j', (text, expected) => {
    expect(redactCredentials(text)).toEqual({ text: expected, kinds: ['assigned_secret'] });
  });

  it.each([
    ['passphrase: correct horse battery staple', `passphrase: ${MARK}`],
    ['passphrase: correct horse battery staple\nnext: line', `passphrase: ${MARK}\nnext: line`],
    [
      '{"password": "correct horse battery staple", "user": "bob"}',
      `{"password": "${MARK}", "user": "bob"}`,
    ],
    ["PASSPHRASE='my dog has fleas' ok", `PASSPHRASE='${MARK}' ok`],
    ['{"text":"password: two words\\nuser: bob"}', `{"text":"password: ${MARK}\\nuser: bob"}`],
    ['login(password=hunter22, user=bob)', `login(password=${MARK}, user=bob)`],
  ])('redacts the whole passphrase in %j', (text, expected) => {
    expect(redactCredentials(text)).toEqual({ text: expected, kinds: ['assigned_secret'] });
  });

  it('redacts at most 256 characters of a passphrase, and stays linear on a long line', () => {
    const words = 'word '.repeat(200);
    const { text } = redactCredentials(`passphrase: ${words}`);
    expect(text.startsWith(`passphrase: ${MARK}`)).toBe(true);
    expect(text.length).toBeLessThan(`passphrase: ${MARK}`.length + 1000 - 256 + 1);
    // Many assignments on one long line: each value read once.
    const many = 'password: a b c '.repeat(20_000);
    expect(redactCredentials(many).text).toContain(MARK);
  });

  it.each([
    'the password is required',
    'Password required.',
    'password: ****',
    'password: <pw>',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the literal text of a shell reference
    'password: ${PW}',
    'password=$PW',
    'secret: true',
    'token: null',
    'password_policy: strict',
    'token_count: 4096',
    'max_tokens: 4096',
    'pass: 12',
    'password: ab',
    'tokens: 1200',
  ])('leaves %j alone', (text) => {
    expect(redactCredentials(text)).toEqual({ text, kinds: [] });
  });

  it('is idempotent on any assignment of words to a secret name', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('password', 'passphrase', 'API_KEY', 'clientSecret', 'token', 'pwd'),
        fc.constantFrom(': ', '=', '": "', "='"),
        fc.array(fc.constantFrom('hunter2', 'horse', 'ab', 'x y', '1234', 'staple'), {
          minLength: 1,
          maxLength: 5,
        }),
        fc.constantFrom('', '"', "'", '\n', ', user: bob'),
        (name, operator, words, tail) => {
          const text = `${name}${operator}${words.join(' ')}${tail}`;
          const once = redactCredentials(text).text;
          expect(redactCredentials(once)).toEqual({ text: once, kinds: [] });
        },
      ),
      { numRuns: 300 },
    );
  });
});
