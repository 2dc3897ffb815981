import { readFileSync } from 'node:fs';
import { counterpartyKind, nameScreeningKey, normalizeName, screeningKey } from './counterparty.js';
import type { SanctionsScreener, ScreeningResult } from './sanctions-screener.js';

/** Options for {@link ListSanctionsScreener}. */
export interface ListSanctionsScreenerOptions {
  /**
   * Listed addresses and account ids (EVM addresses compared case-insensitively, IBANs in
   * electronic format whatever their spacing, separators or `IBAN` prefix).
   */
  addresses?: Iterable<string>;
  /**
   * Listed names, compared by {@link nameScreeningKey}: case, width, accents, punctuation,
   * spaces, invisible characters and look-alike letters from other scripts are ignored.
   */
  names?: Iterable<string>;
  /** Names the list in results and audit events, e.g. `OFAC SDN 2026-05-01`. Default `list`. */
  source?: string;
}

/**
 * Screens against lists you load: sanctioned addresses (EVM addresses compared in lower
 * case, so checksummed and lower-case spellings match; IBANs in electronic format) and names
 * (equal {@link nameScreeningKey}: `E.V.I.L.`, `Еvil` with a Cyrillic Е and `Ev\u200bil` all
 * match a listed `Evil` — but no fuzzy matching beyond that; feed it the aliases your list
 * publishes). Both sides go through the same normalisation, so how a list spells an entry
 * does not matter either.
 *
 * @example
 * const sanctions = ListSanctionsScreener.fromText(readFileSync('sdn.txt', 'utf8'), { source: 'OFAC SDN' });
 * await sanctions.screen('0x8589427373D6D84E98730D7795D8f6f8731FDA16') // { status: 'hit', ... }
 */
export class ListSanctionsScreener implements SanctionsScreener {
  readonly source: string;
  readonly #addresses = new Set<string>();
  /** Screening key → the entry as listed (normalised for display). */
  readonly #names = new Map<string, string>();

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
      // indexOf and no \s* before (.+): linear on any line (npm run lint:redos).
      const comment = raw.indexOf('#');
      const line = (comment === -1 ? raw : raw.slice(0, comment)).trim();
      if (line === '') continue;
      const named = /^name:(.+)$/i.exec(line);
      if (named) screener.addName(named[1]!.trim());
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
    const normalized = screeningKey(address);
    if (normalized !== '') this.#addresses.add(normalized);
    return this;
  }

  /** Adds a name. */
  addName(name: string): this {
    const key = nameScreeningKey(name);
    if (key !== '' && !this.#names.has(key)) this.#names.set(key, normalizeName(name));
    return this;
  }

  /** Entries loaded. */
  get size(): { addresses: number; names: number } {
    return { addresses: this.#addresses.size, names: this.#names.size };
  }

  async screen(counterparty: string): Promise<ScreeningResult> {
    const key = screeningKey(counterparty);
    if (this.#addresses.has(key)) {
      return {
        status: 'hit',
        source: this.source,
        matched: key,
        reason: `address listed on ${this.source}`,
      };
    }
    // Every counterparty is also screened as a name: an account-shaped string that carries
    // a listed name (`EvilCorp1`) is still that name.
    const listed = this.#names.get(nameScreeningKey(counterparty));
    if (listed !== undefined) {
      return {
        status: 'hit',
        source: this.source,
        matched: listed,
        reason: `name listed on ${this.source}`,
      };
    }
    return { status: 'clear', source: this.source };
  }
}
