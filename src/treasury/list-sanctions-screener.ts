import { readFileSync } from 'node:fs';
import { counterpartyKind, normalizeCounterparty, normalizeName } from './counterparty.js';
import type { SanctionsScreener, ScreeningResult } from './sanctions-screener.js';

/** Options for {@link ListSanctionsScreener}. */
export interface ListSanctionsScreenerOptions {
  /** Listed addresses and account ids (EVM addresses compared case-insensitively). */
  addresses?: Iterable<string>;
  /** Listed names (compared after {@link normalizeName}: case, accents, punctuation ignored). */
  names?: Iterable<string>;
  /** Names the list in results and audit events, e.g. `OFAC SDN 2026-05-01`. Default `list`. */
  source?: string;
}

/**
 * Screens against lists you load: sanctioned addresses (EVM addresses compared in lower
 * case, so checksummed and lower-case spellings match) and names (exact match after
 * normalisation — no fuzzy matching; feed it the aliases your list publishes).
 *
 * @example
 * const sanctions = ListSanctionsScreener.fromText(readFileSync('sdn.txt', 'utf8'), { source: 'OFAC SDN' });
 * await sanctions.screen('0x8589427373D6D84E98730D7795D8f6f8731FDA16') // { status: 'hit', ... }
 */
export class ListSanctionsScreener implements SanctionsScreener {
  readonly source: string;
  readonly #addresses = new Set<string>();
  readonly #names = new Set<string>();

  constructor(options: ListSanctionsScreenerOptions = {}) {
    this.source = options.source ?? 'list';
    for (const address of options.addresses ?? []) this.addAddress(address);
    for (const name of options.names ?? []) this.addName(name);
  }

  /**
   * Loads a list from text: one entry per line, `#` starts a comment. Lines that are EVM
   * addresses or account ids are addresses, `name: Some Company` lines are names, any other
   * line is a name.
   */
  static fromText(
    text: string,
    options: Omit<ListSanctionsScreenerOptions, 'addresses' | 'names'> = {},
  ) {
    const screener = new ListSanctionsScreener(options);
    for (const raw of text.split(/\r?\n/)) {
      const line = raw.replace(/#.*$/, '').trim();
      if (line === '') continue;
      const named = /^name:\s*(.+)$/i.exec(line);
      if (named) screener.addName(named[1]!);
      else if (counterpartyKind(line) !== 'name') screener.addAddress(line);
      else screener.addName(line);
    }
    return screener;
  }

  /** {@link fromText} over a file (UTF-8). */
  static fromFile(
    path: string,
    options: Omit<ListSanctionsScreenerOptions, 'addresses' | 'names'> = {},
  ) {
    return ListSanctionsScreener.fromText(readFileSync(path, 'utf8'), options);
  }

  /** Adds an address or account id. */
  addAddress(address: string): this {
    const normalized = normalizeCounterparty(address);
    if (normalized !== '') this.#addresses.add(normalized);
    return this;
  }

  /** Adds a name. */
  addName(name: string): this {
    const normalized = normalizeName(name);
    if (normalized !== '') this.#names.add(normalized);
    return this;
  }

  /** Entries loaded. */
  get size(): { addresses: number; names: number } {
    return { addresses: this.#addresses.size, names: this.#names.size };
  }

  async screen(counterparty: string): Promise<ScreeningResult> {
    const normalized = normalizeCounterparty(counterparty);
    if (this.#addresses.has(normalized)) {
      return {
        status: 'hit',
        source: this.source,
        matched: normalized,
        reason: `address listed on ${this.source}`,
      };
    }
    const name = normalizeName(counterparty);
    if (name !== '' && this.#names.has(name)) {
      return {
        status: 'hit',
        source: this.source,
        matched: name,
        reason: `name listed on ${this.source}`,
      };
    }
    return { status: 'clear', source: this.source };
  }
}
