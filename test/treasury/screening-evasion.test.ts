import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildToolProposal, PolicyEngine } from '../../src/policy/index.js';
import {
  counterpartyKind,
  ibanOf,
  ListSanctionsScreener,
  nameScreeningKey,
  normalizeCounterparty,
  screeningKey,
} from '../../src/treasury/index.js';
import { describeEachDatabase } from '../support/databases.js';
import { type KitBackend, kitFixture } from './kit-fixture.js';

const LISTED_IBAN = 'DE89370400440532013000';
const LISTED_NAME = 'Evil Corp';

// Each way a red-team pass got a listed counterparty screened clear and paid.
const EVASIONS: ReadonlyArray<readonly [string, string]> = [
  ['IBAN with hyphens', 'DE89-3704-0044-0532-0130-00'],
  ['IBAN with non-breaking spaces', 'DE89\u00a03704\u00a00044\u00a00532\u00a00130\u00a000'],
  ['IBAN with an "IBAN " prefix', 'IBAN DE89 3704 0044 0532 0130 00'],
  ['IBAN in lower case with a zero-width space', 'de89370400\u200b440532013000'],
  ['IBAN in full-width digits', 'ＤＥ８９３７０４００４４０５３２０１３０００'],
  ['name with a zero-width space', 'Ev\u200bil Corp'],
  ['name with a Cyrillic look-alike', '\u0415vil C\u043erp'],
  ['name spelled E.V.I.L.', 'E.V.I.L. Corp.'],
  ['name spaced out', 'E V I L  C O R P'],
  ['name in full width and upper case', 'ＥＶＩＬ ＣＯＲＰ'],
];

const screener = () =>
  new ListSanctionsScreener({ addresses: [LISTED_IBAN], names: [LISTED_NAME], source: 'SDN' });

describe('counterparty screening normalises before it matches', () => {
  it.each(EVASIONS)('screens a %s as a hit', async (_, counterparty) => {
    expect(await screener().screen(counterparty)).toMatchObject({ status: 'hit', source: 'SDN' });
  });

  it('matches whatever way the list itself spells an entry', async () => {
    const list = ListSanctionsScreener.fromText(
      'IBAN DE89 3704 0044 0532 0130 00\nname: E.V.I.L. Corp\n',
      { source: 'SDN' },
    );
    expect(list.size).toEqual({ addresses: 1, names: 1 });
    expect(await list.screen(LISTED_IBAN)).toMatchObject({ status: 'hit', matched: LISTED_IBAN });
    expect(await list.screen('evil corp')).toMatchObject({
      status: 'hit',
      matched: 'e v i l corp',
    });
  });

  it('still clears other counterparties and keeps allowlist comparison strict', async () => {
    expect(await screener().screen('Evil Corporation')).toMatchObject({ status: 'clear' });
    expect(await screener().screen('GB82 WEST 1234 5698 7654 32')).toMatchObject({
      status: 'clear',
    });
    // An allowlist must not admit a look-alike payee: its comparison keeps scripts apart.
    expect(normalizeCounterparty('\u0410cme')).not.toBe(normalizeCounterparty('Acme'));
    expect(screeningKey('\u0410cme')).toBe(screeningKey('Acme'));
    // A wrong check digit is not an IBAN, so a name is never read as one.
    expect(ibanOf('DE88 3704 0044 0532 0130 00')).toBeUndefined();
    expect(counterpartyKind('IBAN DE89-3704-0044-0532-0130-00')).toBe('account');
  });

  it('gives every invisible, spacing, case and punctuation variant of a name one key (property)', () => {
    const invisible = fc.constantFrom('\u200b', '\u200c', '\u200d', '\u2060', '\ufeff', '\u00ad');
    const separator = fc.constantFrom(' ', '.', '-', ',', '\u00a0', '\u3000', "'", '_');
    const word = fc.stringMatching(/^[a-z]{1,8}$/);
    fc.assert(
      fc.property(
        fc.array(word, { minLength: 1, maxLength: 4 }),
        fc.array(fc.tuple(fc.boolean(), invisible, separator), { maxLength: 40 }),
        (words, noise) => {
          const plain = words.join(' ');
          let variant = '';
          let index = 0;
          for (const char of plain) {
            const [upper, hidden, punctuation] = noise[index % Math.max(noise.length, 1)] ?? [
              false,
              '',
              '',
            ];
            variant += `${upper ? char.toUpperCase() : char}${index < noise.length ? hidden : ''}`;
            if (index < noise.length && index % 3 === 0) variant += punctuation;
            index++;
          }
          expect(nameScreeningKey(variant)).toBe(nameScreeningKey(plain));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('is idempotent and never throws on any text (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 60 }), (text) => {
        const key = screeningKey(text);
        expect(typeof key).toBe('string');
        expect(nameScreeningKey(nameScreeningKey(text))).toBe(nameScreeningKey(text));
        expect(normalizeCounterparty(normalizeCounterparty(text))).toBe(
          normalizeCounterparty(text),
        );
      }),
      { numRuns: 500 },
    );
  });

  it('maps every printed form of a valid IBAN to its electronic format (property)', () => {
    const separators = fc.constantFrom(' ', '-', '\u00a0', '\u2009', '.', '\u200b', '');
    fc.assert(
      fc.property(
        fc.constantFrom(LISTED_IBAN, 'GB82WEST12345698765432', 'FR1420041010050500013M02606'),
        fc.array(separators, { minLength: 40, maxLength: 40 }),
        fc.boolean(),
        fc.boolean(),
        (iban, gaps, prefix, lower) => {
          const printed = [...iban].map((char, index) => char + gaps[index]).join('');
          const text = `${prefix ? 'IBAN ' : ''}${lower ? printed.toLowerCase() : printed}`;
          expect(ibanOf(text)).toBe(iban);
          expect(screeningKey(text)).toBe(iban);
        },
      ),
      { numRuns: 300 },
    );
  });
});

function paymentSuite(backend: () => KitBackend) {
  it.each(EVASIONS)('refuses to pay a %s, before approval and at execution', async (_, to) => {
    const f = await kitFixture({ backend: backend(), sanctions: screener() });
    const engine = new PolicyEngine({ rules: f.kit.policyRules, audit: f.audit });
    const decision = await engine.evaluate(
      buildToolProposal({
        tool: f.kit.tool.transfer,
        arguments: { to, amount: '10.00', currency: 'USD' },
        threadId: 'thread-1',
        runId: 'thread-1',
        toolCallId: 'call_0',
        proposer: 'payout-bot',
      }),
    );
    expect(decision).toMatchObject({ verdict: 'deny', code: 'sanctions_hit' });
    const paid = await f.transfer({ to, amount: '10.00', currency: 'USD' });
    expect(paid).toMatchObject({ status: 'error', code: 'sanctions_hit' });
    expect(await f.executions()).toBe(0);
  });

  it('refuses a denylisted IBAN or name however it is spelled', async () => {
    const f = await kitFixture({
      backend: backend(),
      kit: { policy: { counterpartyDenylist: ['IBAN DE89 3704 0044 0532 0130 00', 'Evil Corp'] } },
    });
    for (const [index, [, to]] of EVASIONS.entries()) {
      const paid = await f.transfer(
        { to, amount: '1.00', currency: 'USD' },
        { toolCallId: `call_${index}` },
      );
      expect(paid).toMatchObject({ status: 'error', code: 'sanctions_hit' });
    }
    expect(await f.executions()).toBe(0);
  });
}

describe('treasury payments in memory', () => paymentSuite(() => ({ kind: 'memory' })));
describeEachDatabase('treasury payments', ({ db }) =>
  paymentSuite(() => ({ kind: 'database', db: db() })),
);
