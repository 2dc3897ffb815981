/** An EVM address: `0x` followed by 40 hex digits (any case; EIP-55 mixes them). */
export const EVM_ADDRESS = /^0[xX][0-9a-fA-F]{40}$/;

/** What a counterparty identifier looks like. */
export type CounterpartyKind = 'evm_address' | 'account' | 'name';

/**
 * Classifies a counterparty: an EVM address, an account id (letters and digits with at least
 * one digit and no spaces, or an IBAN printed in groups), or else a name.
 */
export function counterpartyKind(value: string): CounterpartyKind {
  const trimmed = value.trim();
  if (EVM_ADDRESS.test(trimmed)) return 'evm_address';
  if (/^[A-Za-z0-9]{6,64}$/.test(trimmed) && /\d/.test(trimmed)) return 'account';
  if (/^[A-Za-z]{2}\d{2}(?: [A-Za-z0-9]{1,4}){2,8}$/.test(trimmed)) return 'account';
  return 'name';
}

/**
 * The comparison form of a counterparty: EVM addresses in lower case (so an EIP-55
 * checksummed address matches its lower-case listing); account ids upper-cased without
 * spaces; names through {@link normalizeName}.
 *
 * @example normalizeCounterparty('0x90F8bf9A1C437435f3065A5A90310243E197c3b2') // '0x90f8bf9a…c3b2'
 */
export function normalizeCounterparty(value: string): string {
  const trimmed = value.trim();
  switch (counterpartyKind(trimmed)) {
    case 'evm_address':
      return `0x${trimmed.slice(2).toLowerCase()}`;
    case 'account':
      return trimmed.replace(/\s+/g, '').toUpperCase();
    case 'name':
      return normalizeName(trimmed);
  }
}

/**
 * The comparison form of a person's or company's name: Unicode NFKD without diacritics,
 * lower case, punctuation dropped, whitespace collapsed — `"Ácme  Suppliers, Ltd."` and
 * `"acme suppliers ltd"` compare equal.
 */
export function normalizeName(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}
