import { electronicFormatIBAN, isValidIBAN } from 'ibantools';
import { confusableSkeleton, foldText } from '../identity/index.js';

/** An EVM address: `0x` followed by 40 hex digits (any case; EIP-55 mixes them). */
export const EVM_ADDRESS = /^0[xX][0-9a-fA-F]{40}$/;

/** What a counterparty identifier looks like. */
export type CounterpartyKind = 'evm_address' | 'account' | 'name';

const DEFAULT_IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;
// Separators people and documents put inside an IBAN: spaces of every width (NBSP, thin
// space, ideographic space …), hyphens and dashes, dots, slashes.
const IBAN_SEPARATORS = /[\p{Z}\s\p{Pd}./]+/gu;
const IBAN_PREFIX = /^IBAN:?/i;

/** Invisible characters removed and NFKC applied: the form every other step starts from. */
function visible(value: string): string {
  return value.replace(DEFAULT_IGNORABLE, '').normalize('NFKC').trim();
}

/**
 * The IBAN in `value` in electronic format (`DE89370400440532013000`), if `value` is one
 * however it is printed: in groups, with hyphens, non-breaking or other spaces, dots, an
 * `IBAN` / `IBAN:` prefix, invisible characters or full-width digits. Validated by
 * `ibantools` (country, length, check digits), so no name is ever taken for an IBAN.
 *
 * @example ibanOf('IBAN DE89-3704-0044-0532-0130-00') // 'DE89370400440532013000'
 */
export function ibanOf(value: string): string | undefined {
  const candidate = electronicFormatIBAN(
    visible(value).replace(IBAN_SEPARATORS, '').replace(IBAN_PREFIX, ''),
  );
  return candidate && isValidIBAN(candidate) ? candidate : undefined;
}

/**
 * Classifies a counterparty: an EVM address, an account id (an IBAN in any printed form, see
 * {@link ibanOf}, or letters and digits with at least one digit and no spaces), or else a name.
 */
export function counterpartyKind(value: string): CounterpartyKind {
  const trimmed = visible(value);
  if (EVM_ADDRESS.test(trimmed)) return 'evm_address';
  if (ibanOf(trimmed) !== undefined) return 'account';
  if (/^[A-Za-z0-9]{6,64}$/.test(trimmed) && /\d/.test(trimmed)) return 'account';
  return 'name';
}

/**
 * The comparison form of a counterparty for allowlists and records: EVM addresses in lower
 * case (so an EIP-55 checksummed address matches its lower-case listing); IBANs in electronic
 * format; other account ids upper-cased; names through {@link normalizeName}. Strict on
 * purpose: a look-alike name is a different payee here (an allowlist must not admit one);
 * screening against deny and sanctions lists uses the looser {@link screeningKey}.
 *
 * @example normalizeCounterparty('0x90F8bf9A1C437435f3065A5A90310243E197c3b2') // '0x90f8bf9a…c3b2'
 */
export function normalizeCounterparty(value: string): string {
  const trimmed = visible(value);
  switch (counterpartyKind(trimmed)) {
    case 'evm_address':
      return `0x${trimmed.slice(2).toLowerCase()}`;
    case 'account':
      return ibanOf(trimmed) ?? trimmed.toUpperCase();
    case 'name':
      return normalizeName(trimmed);
  }
}

/**
 * The comparison form of a person's or company's name, for display and allowlists: NFKC,
 * invisible characters removed, case-folded, diacritics dropped, punctuation dropped,
 * whitespace collapsed — `"Ácme  Suppliers, Ltd."` and `"acme suppliers ltd"` compare equal.
 */
export function normalizeName(name: string): string {
  return foldText(name)
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/**
 * The key a name is screened by (deny and sanctions lists): {@link foldText} (invisibles,
 * NFKC, case), then the confusable skeleton of Unicode TS #39 (Cyrillic `Еvil` and Latin
 * `Evil` meet), then only letters and digits kept — punctuation, spaces and diacritics go, so
 * `E.V.I.L.`, `E V I L` and `evil` are one key. It over-matches on purpose: for screening a
 * false hit costs a review, a miss costs a sanctioned payment. A comparison key, never shown.
 *
 * @example nameScreeningKey('Е.V.I.L.\u200b Corp') === nameScreeningKey('evil corp') // true
 */
export function nameScreeningKey(name: string): string {
  let key = foldText(name);
  // A few prototypes are themselves confusable (⋂ → Armenian ո → n): repeat to a fixed
  // point, so a character and its prototype always share a key.
  for (let round = 0; round < 4; round++) {
    const next = foldText(confusableSkeleton(key))
      .normalize('NFD')
      .replace(/\p{M}+/gu, '')
      .replace(/[^\p{L}\p{N}]+/gu, '');
    if (next === key) break;
    key = next;
  }
  return key;
}

/**
 * The key a counterparty is screened by against deny and sanctions lists: EVM addresses,
 * IBANs and account ids as in {@link normalizeCounterparty} (invisible characters, spacing,
 * separators and prefixes removed first), names by {@link nameScreeningKey}.
 */
export function screeningKey(value: string): string {
  const kind = counterpartyKind(value);
  return kind === 'name' ? nameScreeningKey(value) : normalizeCounterparty(value);
}
