/**
 * The shapes a registered secret can take in text: itself, URL-encoded (found through a
 * percent-decoded view of the text, plus the encoded form itself for non-ASCII values) and
 * base64 — standard and URL-safe alphabets, at each of the three byte alignments a value can
 * have inside a larger encoded blob.
 */

/** One searchable form of a secret. */
export interface SecretForm {
  /** `raw`, `url`, `base64-<alignment>`, `base64url-<alignment>`. */
  form: string;
  text: string;
}

/**
 * Base64 of `bytes` as it appears inside any base64 text where it starts at byte offset
 * ≡ `alignment` (mod 3): only the characters whose 6 bits all come from `bytes`.
 */
export function base64Core(bytes: Uint8Array, alignment: 0 | 1 | 2): string {
  const padded = Buffer.concat([Buffer.alloc(alignment), bytes]);
  const encoded = padded.toString('base64');
  const first = Math.ceil((8 * alignment) / 6);
  const last = Math.floor((8 * (alignment + bytes.length)) / 6); // exclusive
  return encoded.slice(first, last);
}

/** Every form of `value` worth searching for (forms shorter than 8 characters are left out). */
export function secretForms(value: string): SecretForm[] {
  const forms: SecretForm[] = [{ form: 'raw', text: value }];
  // ASCII values are found through the percent-decoded view; non-ASCII ones decode to UTF-8
  // bytes, which that view does not turn back into the value, so search the encoding itself.
  const encoded = encodeURIComponent(value);
  if (encoded !== value && /[^\x00-\x7f]/.test(value)) forms.push({ form: 'url', text: encoded });
  // Form encoding writes a space as "+", which the decoded view leaves alone.
  if (value.includes(' ')) forms.push({ form: 'form', text: value.replaceAll(' ', '+') });
  const bytes = Buffer.from(value, 'utf8');
  const cores = ([0, 1, 2] as const).map((alignment) => base64Core(bytes, alignment));
  // One length for all alignments, so that matching needs one rolling hash per secret.
  const length = Math.min(...cores.map((core) => core.length));
  if (length >= 8) {
    cores.forEach((core, alignment) => {
      const standard = core.slice(0, length);
      forms.push({ form: `base64-${alignment}`, text: standard });
      const urlSafe = standard.replaceAll('+', '-').replaceAll('/', '_');
      if (urlSafe !== standard) forms.push({ form: `base64url-${alignment}`, text: urlSafe });
    });
  }
  return forms;
}

/** Shortest secret whose fingerprint may be stored in the database. */
export const MIN_PERSISTED_SECRET_LENGTH = 16;
/** Least estimated entropy, in bits, of a secret whose fingerprint may be stored. */
export const MIN_PERSISTED_SECRET_BITS = 96;

/**
 * Why a secret is too weak to have a fingerprint stored (the stored HMAC lets anyone who can
 * read the table test guesses offline), or undefined when it is strong enough. The estimate
 * is an upper bound — length × log2(size of the character classes used) — so it refuses
 * short, single-class and repetitive values but cannot see that a long value is guessable
 * (a passphrase of dictionary words): register generated secrets.
 */
export function weakSecretReason(value: string): string | undefined {
  if (value.length < MIN_PERSISTED_SECRET_LENGTH) {
    return `it has ${value.length} characters; at least ${MIN_PERSISTED_SECRET_LENGTH} are needed`;
  }
  let pool = 0;
  if (/[a-z]/.test(value)) pool += 26;
  if (/[A-Z]/.test(value)) pool += 26;
  if (/[0-9]/.test(value)) pool += 10;
  if (/[^a-zA-Z0-9]/.test(value)) pool += 33;
  const bits = Math.floor(value.length * Math.log2(Math.max(pool, 2)));
  if (bits < MIN_PERSISTED_SECRET_BITS) {
    return `its estimated entropy is ${bits} bits; at least ${MIN_PERSISTED_SECRET_BITS} are needed`;
  }
  if (new Set(value).size < 8) return 'it uses fewer than 8 distinct characters';
  if (smallestPeriod(value) < value.length / 2) return 'it repeats itself';
  return undefined;
}

// Knuth–Morris–Pratt failure function: the shortest p with value[i] = value[i + p].
function smallestPeriod(value: string): number {
  const failure = new Int32Array(value.length);
  for (let index = 1, matched = 0; index < value.length; index++) {
    while (matched > 0 && value[index] !== value[matched]) matched = failure[matched - 1]!;
    if (value[index] === value[matched]) matched++;
    failure[index] = matched;
  }
  return value.length - (failure[value.length - 1] ?? 0);
}
