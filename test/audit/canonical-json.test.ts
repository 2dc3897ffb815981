import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AuditLog,
  canonicalJson,
  contentHash,
  hashTraceEvent,
  sha256Hex,
} from '../../src/audit/index.js';
import { pickHashedFields } from '../../src/audit/trace-event.js';
import { VeridexError } from '../../src/errors/index.js';

const fromBits = (hex: string): number => Buffer.from(hex, 'hex').readDoubleBE(0);

describe('canonicalJson (RFC 8785)', () => {
  it('matches the RFC 8785 §3.2.2 example', () => {
    const input = JSON.parse(
      '{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],' +
        '"string":"\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",' +
        '"literals":[null,true,false]}',
    );
    expect(canonicalJson(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
        '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it('sorts keys by UTF-16 code units as in RFC 8785 §3.2.3', () => {
    const input = {
      '\u20ac': 'Euro Sign',
      '\r': 'Carriage Return',
      '\ufb33': 'Hebrew Letter Dalet With Dagesh',
      '1': 'One',
      '\ud83d\ude00': 'Emoji: Grinning Face',
      '\u0080': 'Control',
      '\u00f6': 'Latin Small Letter O With Diaeresis',
    };
    // Read the keys off the text: a parsed object would move the integer-like key "1" first.
    const text = canonicalJson(input);
    const values = ['Carriage Return', 'One', 'Control', 'Latin Small', 'Euro', 'Emoji', 'Hebrew'];
    const positions = values.map((value) => text.indexOf(value));
    expect(positions.every((position) => position > 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    expect(text.startsWith('{"\\r":"Carriage Return","1":"One","\u0080":"Control"')).toBe(true);
  });

  it('serialises the RFC 8785 Appendix B numbers', () => {
    const cases: Array<[string, string]> = [
      ['0000000000000000', '0'],
      ['8000000000000000', '0'],
      ['0000000000000001', '5e-324'],
      ['8000000000000001', '-5e-324'],
      ['7fefffffffffffff', '1.7976931348623157e+308'],
      ['4340000000000000', '9007199254740992'],
      ['4430000000000000', '295147905179352830000'],
      ['44b52d02c7e14af5', '9.999999999999997e+22'],
      ['44b52d02c7e14af6', '1e+23'],
      ['444b1ae4d6e2ef50', '1e+21'],
      ['3eb0c6f7a0b5ed8d', '0.000001'],
      ['41b3de4355555553', '333333333.3333332'],
      ['becbf647612f3696', '-0.0000033333333333333333'],
      ['43143ff3c1cb0959', '1424953923781206.2'],
    ];
    for (const [bits, expected] of cases) expect(canonicalJson(fromBits(bits))).toBe(expected);
  });

  it('rejects values JSON cannot represent, naming their path', () => {
    const rejected: Array<[unknown, string]> = [
      [{ amount: 5n }, '$.amount'],
      [{ list: [1, undefined] }, '$.list[1]'],
      [undefined, '$'],
      [{ n: Number.NaN }, '$.n'],
      [{ n: Number.POSITIVE_INFINITY }, '$.n'],
      [{ f: () => 1 }, '$.f'],
      [{ at: new Date(0) }, '$.at'],
      [{ s: 'lone \ud800 surrogate' }, '$.s'],
    ];
    for (const [value, path] of rejected) {
      let error: unknown;
      try {
        canonicalJson(value);
      } catch (caught) {
        error = caught;
      }
      expect(VeridexError.is(error, 'canonical_json_invalid'), `for ${path}`).toBe(true);
      expect((error as VeridexError).details.path).toBe(path);
    }
  });

  it('rejects circular structures instead of overflowing the stack', () => {
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    expect(() => canonicalJson(loop)).toThrow(/circular/);
  });

  it('keeps an own "__proto__" key whatever the key order (two objects never hash the same)', () => {
    const unsorted = JSON.parse('{"b":1,"__proto__":{"x":1}}');
    const sorted = JSON.parse('{"__proto__":{"x":1},"b":1}');
    expect(canonicalJson(unsorted)).toBe('{"__proto__":{"x":1},"b":1}');
    expect(canonicalJson(sorted)).toBe('{"__proto__":{"x":1},"b":1}');
    expect(canonicalJson(unsorted)).not.toBe(canonicalJson({ b: 1 }));
  });

  it('omits undefined object properties, like JSON.stringify', () => {
    expect(canonicalJson({ a: 1, b: undefined })).toBe('{"a":1}');
  });

  it('does not depend on key insertion order (property)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (record) => {
        const reversed = Object.fromEntries(Object.entries(record).reverse());
        expect(canonicalJson(reversed)).toBe(canonicalJson(record));
      }),
    );
  });

  it('round-trips through JSON.parse and is a fixed point (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ noUnicodeString: false }), (value) => {
        const text = canonicalJson(value);
        expect(canonicalJson(JSON.parse(text))).toBe(text);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });

  it('gives different content hashes for values that differ (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        fc.pre(canonicalJson(a) !== canonicalJson(b));
        expect(contentHash(a)).not.toBe(contentHash(b));
      }),
    );
  });

  it('produces exactly the bytes of the reference `canonicalize` package (property)', () => {
    const keyish = fc.oneof(
      fc.string({ unit: 'grapheme' }),
      fc.constantFrom('0', '1', '10', '9', '01', '-1', '4294967295', 'a', '\u0080'),
    );
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        fc.jsonValue({ noUnicodeString: false }),
        fc.array(tie('node'), { maxLength: 4 }),
        fc.dictionary(keyish, tie('node'), { maxKeys: 6 }),
      ),
    })).node;
    fc.assert(
      fc.property(value, (input) => {
        expect(canonicalJson(input)).toBe(canonicalize(input));
      }),
      { numRuns: 500 },
    );
  });

  it('writes deep nesting, class instances and null-prototype objects like the reference', () => {
    let deep: unknown = { leaf: ['x', 1] };
    for (let level = 0; level < 200; level++)
      deep = level % 2 ? [deep] : { [`k${level}`]: deep, a: level };
    class Point {
      y = 2;
      x = 1;
    }
    const bare = Object.assign(Object.create(null), { b: 1, a: [new Point()] });
    for (const value of [deep, new Point(), bare, { m: new Map([['a', 1]]) }]) {
      expect(canonicalJson(value)).toBe(canonicalize(value));
    }
  });

  it('serialises objects with toJSON through it, like JSON.stringify', () => {
    const ref = { toJSON: () => '[REDACTED:KEY]' };
    expect(canonicalJson({ key: ref, n: 1 })).toBe('{"key":"[REDACTED:KEY]","n":1}');
  });
});

describe('hashTraceEvent', () => {
  it('equals SHA-256 of the canonical JSON of the hashed fields (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.string(), fc.jsonValue()),
        fc.string(),
        async (payload, runId) => {
          const audit = new AuditLog();
          const event = await audit.append({
            threadId: 'h',
            runId,
            type: 'tool_executed',
            payload,
          });
          expect(event.hash).toBe(sha256Hex(canonicalJson(pickHashedFields(event))));
          expect(hashTraceEvent(event)).toBe(event.hash);
        },
      ),
      { numRuns: 100 },
    );
  });
});
