/**
 * How far the value of a secret assignment reaches (README *Audit*, "Credential redaction"):
 * an unambiguous name (`password`, `DB_PWD`, `clientSecret`, `X-Api-Key`, `auth_token`) makes
 * a value of 4+ characters a secret (`password: hunter2`), where other names need 8; a
 * password or passphrase name also takes every word up to the closing quote or the line end
 * (`passphrase: correct horse battery staple`), at most {@link MAX_PASSPHRASE} characters.
 * Plain loops over a bounded window: the caller resumes scanning after the value.
 */

import { has, LETTER, runEnd } from './credential-text.js';
import { forEachSegment } from './credential-words.js';

/** Longest passphrase taken after a password name, in UTF-16 code units. */
export const MAX_PASSPHRASE = 256;

/** How unambiguously an identifier names a secret. */
export type SecretNameStrength = 'none' | 'strong' | 'password';

const PASSWORD_WORDS = new Set(['password', 'passwd', 'pwd', 'passphrase']);
const STRONG_WORDS = new Set(['secret', 'token', 'apikey']);

/**
 * `password` when the identifier's last word is a password word, `strong` when it is
 * `secret`, `token`, `apikey` or `api` + `key`; `none` otherwise (`password_policy`,
 * `token_count`, `pass`): only the last word decides, so a name about a secret is not one.
 */
export function secretNameStrength(text: string, start: number, end: number): SecretNameStrength {
  let previous = '';
  let last = '';
  let index = start;
  while (index < end) {
    if (!has(text.charCodeAt(index), LETTER)) {
      index++;
      continue;
    }
    const wordEnd = Math.min(runEnd(text, index, LETTER), end);
    forEachSegment(text, index, wordEnd, (from, to) => {
      previous = last;
      last = text.slice(from, to).toLowerCase();
    });
    index = wordEnd;
  }
  if (PASSWORD_WORDS.has(last)) return 'password';
  if (STRONG_WORDS.has(last) || (last === 'key' && previous === 'api')) return 'strong';
  return 'none';
}

// Values that say something about a secret rather than being one.
const NOT_SECRETS = new Set([
  'true',
  'false',
  'null',
  'none',
  'nil',
  'undefined',
  'empty',
  'required',
  'optional',
  'hidden',
  'unset',
]);

/** The shortest value taken as a secret after a name of this strength. */
export function minimumSecretLength(strength: SecretNameStrength, value: string): number {
  if (strength === 'none') return 8;
  // `<password>`, `true`, `null`: placeholders and literals, not secrets.
  if (value.startsWith('<') || NOT_SECRETS.has(value.toLowerCase())) return 8;
  return 4;
}

/**
 * The end of a passphrase whose first word ends at `from`: up to the closing `quote` (a code
 * unit, or 0 when the value was not quoted), a line break or a backslash (a JSON escape such
 * as `\n`), no further than `limit` or {@link MAX_PASSPHRASE} characters from `start`, with
 * trailing blanks left out.
 */
export function passphraseEnd(
  text: string,
  start: number,
  from: number,
  quote: number,
  limit: number,
): number {
  const stop = Math.min(limit, start + MAX_PASSPHRASE, text.length);
  let index = from;
  while (index < stop) {
    const code = text.charCodeAt(index);
    if (code === 10 || code === 13 || code === 92 || (quote !== 0 && code === quote)) break;
    index++;
  }
  while (index > from && (text.charCodeAt(index - 1) === 32 || text.charCodeAt(index - 1) === 9)) {
    index--;
  }
  return index;
}
