import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { listElements } from '../../src/checkpointer/encoded-value.js';
import { isJsonArrayText, splitJsonArray } from '../../src/checkpointer/split-json-array.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function split(text: string): string[] | undefined {
  const bytes = encoder.encode(text);
  return splitJsonArray(bytes, 1, bytes.length - 1)?.map(([start, end]) =>
    decoder.decode(bytes.subarray(start, end)),
  );
}

// Strings with the characters that matter to a splitter: quotes, backslashes, brackets,
// commas, non-ASCII and astral code points.
const tricky = fc.string({
  unit: fc.constantFrom(
    '"',
    '\\',
    ',',
    '[',
    ']',
    '{',
    '}',
    ':',
    'a',
    ' ',
    'é',
    '🧾',
    '\n',
    '\u0001',
  ),
});
const value = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.jsonValue({ maxDepth: 2 }),
    tricky,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(tricky, tie('value'), { maxKeys: 3 }),
  ),
})).value;

describe('splitJsonArray', () => {
  it('splits any JSON array into exactly the serialised text of each element', () => {
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 8 }), (items) => {
        const parts = split(JSON.stringify(items));
        expect(parts).toEqual(items.map((item) => JSON.stringify(item)));
      }),
    );
  });

  it('keeps whitespace so that joining the elements gives back the original bytes', () => {
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 5 }), (items) => {
        const text = JSON.stringify(items, null, 2);
        const parts = split(text)!;
        expect(`[${parts.join(',')}]`).toBe(text);
        expect(parts.map((part) => JSON.parse(part))).toEqual(JSON.parse(text));
      }),
    );
  });

  it('refuses malformed input instead of guessing', () => {
    for (const text of ['[]', '[ ]', '[1,]', '[,1]', '[1,,2]', '["unterminated]', '[1]]', '[{]']) {
      expect(split(text), text).toBeUndefined();
    }
    expect(isJsonArrayText(encoder.encode('{"a":[1]}'))).toBe(false);
    expect(isJsonArrayText(encoder.encode('[1]'))).toBe(true);
  });

  it('hands back element texts only when every element is valid UTF-8', () => {
    const valid = encoder.encode('["é",{"b":"🧾"}]');
    expect(listElements(valid, 1)?.map((element) => element.body)).toEqual(['"é"', '{"b":"🧾"}']);
    const broken = Uint8Array.from([0x5b, 0x22, 0xc3, 0x22, 0x2c, 0x31, 0x5d]); // ["\xC3",1]
    expect(listElements(broken, 1)).toBeUndefined();
  });
});
