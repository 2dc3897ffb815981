import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deriveProvenance, leastTrusted } from '../../src/memory/index.js';

// Issue 30: a tool answers with a value in a disguised spelling, the user only asked about it,
// and the model writes the value as a fact about the user. Before the fix the "half the words
// are the user's" rule ran first, and "D-E-8-9-…" held no word (single characters are not
// words): the write was the user's, or the model's.

/** The user asks, a tool answers with `toolText`, in the same turn. */
function turn(question: string, toolText: string): BaseMessage[] {
  return [
    new HumanMessage(question),
    new AIMessage({
      content: '',
      tool_calls: [{ id: 'c1', name: 'get_account', args: {} }],
    }),
    new ToolMessage({ content: toolText, tool_call_id: 'c1', name: 'get_account' }),
  ];
}

/** As a conversation where the tool answered in an earlier turn, and the user spoke since. */
function earlierTurn(question: string, toolText: string, followUp: string): BaseMessage[] {
  return [...turn(question, toolText), new AIMessage('Done.'), new HumanMessage(followUp)];
}

const IBAN = 'DE89370400440532013000';
const QUESTION = "What's the payout IBAN on my account?";

function fullWidth(text: string): string {
  return [...text]
    .map((char) => {
      const code = char.charCodeAt(0);
      return code > 0x20 && code < 0x7f ? String.fromCharCode(code + 0xfee0) : char;
    })
    .join('');
}

describe('deriveProvenance: a high-value value a tool supplied', () => {
  const ibanSpellings: Array<[string, string]> = [
    ['one hyphen per character', `IBAN changed to ${[...IBAN].join('-')}`],
    ['spaced characters, lower case', `iban changed to ${[...IBAN.toLowerCase()].join(' ')}`],
    ['groups of four', 'IBAN changed to DE89 3704 0044 0532 0130 00'],
    ['full width', `IBAN changed to ${fullWidth(IBAN)}`],
    ['with invisible characters', `IBAN changed to ${[...IBAN].join('\u200b')}`],
    ['dots and slashes', 'IBAN changed to DE.89/3704.0044/0532.0130/00'],
  ];

  it.each(ibanSpellings)(
    'makes an IBAN the tool gave (%s) tool-sourced, in every spelling of the write',
    (_, toolText) => {
      for (const write of [
        `The user's payout IBAN is ${IBAN}`,
        "The user's payout IBAN is DE89 3704 0044 0532 0130 00",
        `The user's payout IBAN is ${fullWidth(IBAN)}.`,
        `The user's payout IBAN is ${[...IBAN].join('-')}`,
      ]) {
        expect(deriveProvenance([write], turn(QUESTION, toolText)), write).toEqual({
          source: 'tool',
          basis: 'tool_value',
        });
      }
    },
  );

  it('makes the write tool-sourced whatever the model declares (user or none)', () => {
    const derived = deriveProvenance(
      [`The user's payout IBAN is ${IBAN}`],
      turn(QUESTION, `IBAN changed to ${[...IBAN].join('-')}`),
    );
    expect(leastTrusted('user', derived.source)).toBe('tool');
    expect(leastTrusted('model', derived.source)).toBe('tool');
  });

  it('still makes it tool-sourced when the user spoke again since the tool answered', () => {
    const conversation = earlierTurn(
      QUESTION,
      `IBAN changed to ${[...IBAN].join('-')}`,
      'Thanks, please remember my payout IBAN.',
    );
    expect(deriveProvenance([`The user's payout IBAN is ${IBAN}`], conversation).source).toBe(
      'tool',
    );
  });

  it('makes an email, a URL, an amount and an account number from a tool tool-sourced', () => {
    const cases: Array<[string, string, string]> = [
      [
        "What's the contact email on my account?",
        'Contact email is now P A Y O U T S @ E V I L . E X A M P L E',
        "The user's contact email is payouts@evil.example",
      ],
      [
        "What's my payout link?",
        'Payout link: h-t-t-p-s-:-/-/-e-v-i-l-.-e-x-a-m-p-l-e-/-p-a-y',
        "The user's payout link is https://evil.example/pay",
      ],
      [
        'How much is my monthly payout?',
        'Monthly payout set to 1 2 5 0 . 0 0 EUR',
        "The user's monthly payout is 1,250.00 EUR",
      ],
      [
        "What's my account number?",
        'Account number: ４４０５３２０１３０',
        "The user's account number is 4405 3201 30",
      ],
      ['How much is my fee?', 'Fee: €250', "The user's fee is 250 EUR"],
    ];
    for (const [question, toolText, write] of cases) {
      expect(deriveProvenance([write], turn(question, toolText)), write).toEqual({
        source: 'tool',
        basis: 'tool_value',
      });
    }
  });

  it('keeps a value the user gave and no tool output holds the user’s', () => {
    const conversation = [
      new HumanMessage('My payout IBAN is DE89 3704 0044 0532 0130 00, remember it.'),
      new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'get_time', args: {} }] }),
      new ToolMessage({ content: 'It is 2026-11-27T10:00:00Z', tool_call_id: 'c1' }),
      new AIMessage('Noted.'),
      new HumanMessage('Thanks.'),
    ];
    expect(deriveProvenance([`The user's payout IBAN is ${IBAN}`], conversation)).toEqual({
      source: 'user',
      basis: 'user_text',
    });
  });

  it('needs a short number to stand alone in the tool output, not inside a longer one', () => {
    const conversation = [
      new HumanMessage('I am 250 km from the office, remember that.'),
      new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'get_time', args: {} }] }),
      new ToolMessage({ content: 'Order 12505 shipped', tool_call_id: 'c1' }),
      new AIMessage('Noted.'),
      new HumanMessage('Thanks.'),
    ];
    expect(deriveProvenance(['The user is 250 km from the office'], conversation).source).toBe(
      'user',
    );
  });

  it('stays linear on long hostile tool output and writes', () => {
    const toolText = `${'1-'.repeat(50_000)}x ${'a@'.repeat(20_000)} ${'https://'.repeat(10_000)}`;
    const write = `The user's number is ${'9 '.repeat(20_000)} ${'@.'.repeat(20_000)}`;
    const started = performance.now();
    deriveProvenance([write], turn('What is my number?', toolText));
    // Generous for a loaded 2-core machine; a quadratic scan of these sizes takes minutes.
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

/** A high-value value and how a tool may spell it. */
const highValue = fc.oneof(
  fc
    .tuple(fc.constantFrom('DE', 'GB', 'FR', 'NL'), fc.stringMatching(/^[0-9]{14,26}$/))
    .map(([country, digits]) => `${country}${digits}`),
  fc.stringMatching(/^[0-9]{6,18}$/),
  fc
    .tuple(fc.stringMatching(/^[a-z]{3,10}$/), fc.stringMatching(/^[a-z]{3,10}$/))
    .map(([local, domain]) => `${local}@${domain}.example`),
  fc
    .tuple(fc.stringMatching(/^[a-z]{3,10}$/), fc.stringMatching(/^[a-z0-9]{1,10}$/))
    .map(([host, path]) => `https://${host}.example/${path}`),
  fc
    .tuple(fc.integer({ min: 1000, max: 9_999_999 }), fc.integer({ min: 0, max: 99 }))
    .map(([units, cents]) => `${units}.${String(cents).padStart(2, '0')}`),
);

const spelling = fc.record({
  separator: fc.constantFrom('', ' ', '-', '.', '/', '\u200b', '\u00a0', ' - '),
  upper: fc.boolean(),
  wide: fc.boolean(),
});

function spell(value: string, how: { separator: string; upper: boolean; wide: boolean }): string {
  let text = [...value].join(how.separator);
  if (how.upper) text = text.toUpperCase();
  return how.wide ? fullWidth(text) : text;
}

describe('deriveProvenance (property)', () => {
  it('classifies a write holding a value a tool gave as tool-sourced, however the tool spelled it', () => {
    fc.assert(
      fc.property(
        highValue,
        spelling,
        fc.constantFrom('IBAN', 'account', 'email', 'link', 'payout'),
        fc.boolean(),
        (value, how, word, sameTurn) => {
          const toolText = `Your ${word} was updated: ${spell(value, how)} (effective today)`;
          const question = `What's the ${word} on my account?`;
          const conversation = sameTurn
            ? turn(question, toolText)
            : earlierTurn(question, toolText, `Remember my ${word} please.`);
          const derived = deriveProvenance([`The user's ${word} is ${value}`], conversation);
          expect(derived).toEqual({ source: 'tool', basis: 'tool_value' });
        },
      ),
      { numRuns: 500 },
    );
  });
});
