import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  counterpartyKind,
  ListSanctionsScreener,
  NoopSanctionsScreener,
  normalizeCounterparty,
  normalizeName,
} from '../../src/treasury/index.js';

const ACME = '0x90F8bf9A1C437435f3065A5A90310243E197c3b2';
const LISTED = '0x8589427373D6D84E98730D7795D8f6f8731FDA16';

describe('counterparty normalisation', () => {
  it('compares EVM addresses case-insensitively and keeps names and accounts apart', () => {
    expect(normalizeCounterparty(ACME)).toBe(ACME.toLowerCase());
    expect(normalizeCounterparty(` ${ACME.toUpperCase().replace('0X', '0x')} `)).toBe(
      ACME.toLowerCase(),
    );
    expect(counterpartyKind(ACME)).toBe('evm_address');
    expect(counterpartyKind('DE89 3704 0044 0532 0130 00')).toBe('account');
    expect(normalizeCounterparty('DE89 3704 0044 0532 0130 00')).toBe('DE89370400440532013000');
    expect(counterpartyKind('Acme Suppliers 2')).toBe('name');
    expect(normalizeName('Ácme  Suppliers, Ltd.')).toBe('acme suppliers ltd');
  });

  it('maps every case variant of an EVM address to the same form (property)', () => {
    const hex = fc.stringMatching(/^[0-9a-f]{40}$/);
    fc.assert(
      fc.property(
        hex,
        fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }),
        (digits, upper) => {
          const mixed = [...digits].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join('');
          expect(normalizeCounterparty(`0x${mixed}`)).toBe(`0x${digits}`);
        },
      ),
    );
  });
});

describe('NoopSanctionsScreener', () => {
  it('clears everyone and says so in the source', async () => {
    expect(await new NoopSanctionsScreener().screen()).toEqual({
      status: 'clear',
      source: 'noop',
    });
  });
});

describe('ListSanctionsScreener', () => {
  it('matches a listed EVM address whatever its case', async () => {
    const screener = new ListSanctionsScreener({
      addresses: [LISTED.toLowerCase()],
      source: 'SDN',
    });
    expect(await screener.screen(LISTED)).toEqual({
      status: 'hit',
      source: 'SDN',
      matched: LISTED.toLowerCase(),
      reason: 'address listed on SDN',
    });
    expect(await screener.screen(ACME)).toEqual({ status: 'clear', source: 'SDN' });
  });

  it('matches names after normalising case, accents and punctuation, and nothing fuzzier', async () => {
    const screener = new ListSanctionsScreener({ names: ['Évil Corp, Ltd.'] });
    expect((await screener.screen('evil corp ltd')).status).toBe('hit');
    expect((await screener.screen('EVIL  CORP LTD')).status).toBe('hit');
    expect((await screener.screen('Evil Corporation')).status).toBe('clear');
  });

  it('loads addresses and names from a list file with comments', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sanctions-'));
    const path = join(dir, 'list.txt');
    writeFileSync(
      path,
      [
        '# OFAC SDN digital currency addresses (excerpt)',
        `${LISTED}   # Tornado Cash`,
        'name: Lazarus Group',
        'Garantex Europe OU',
        '',
      ].join('\n'),
    );
    const screener = ListSanctionsScreener.fromFile(path, { source: 'OFAC' });
    expect(screener.size).toEqual({ addresses: 1, names: 2 });
    expect((await screener.screen(LISTED.toLowerCase())).status).toBe('hit');
    expect((await screener.screen('lazarus group')).status).toBe('hit');
    expect((await screener.screen('Garantex Europe OÜ')).status).toBe('hit');
    expect((await screener.screen(ACME)).status).toBe('clear');
  });
});
