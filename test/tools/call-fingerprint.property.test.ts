import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { contentHash } from '../../src/audit/index.js';
import { callFingerprint } from '../../src/tools/idempotency-key.js';
import { tool } from '../../src/tools/index.js';
import { jsonSchemaOf } from '../../src/tools/json-schema.js';

const lookup = tool({
  name: 'lookup',
  description: 'Look something up.',
  safetyClass: 'read',
  input: z.object({ query: z.string() }).passthrough(),
  output: z.null(),
  execute: async () => null,
});

// The definition of a call fingerprint, written out: SHA-256 of the canonical JSON of the tool's
// name, its input JSON Schema and the arguments as JSON (bigint as "<digits>n"). Records in a
// durable ledger carry fingerprints made this way, so a faster computation must give the same.
function definedFingerprint(input: unknown): string {
  const text = JSON.stringify(input, (_key, item) =>
    typeof item === 'bigint' ? `${item}n` : item,
  );
  return contentHash({
    tool: lookup.name,
    inputSchema: jsonSchemaOf(lookup.input, 'input'),
    arguments: text === undefined ? null : JSON.parse(text),
  });
}

describe('callFingerprint', () => {
  it('is the hash of name, input schema and JSON arguments, for any arguments (property)', () => {
    const awkward = fc.oneof(
      fc.bigInt(),
      fc.date({ noInvalidDate: true }),
      fc.constant(Number.NaN),
      fc.constant(undefined),
      fc.constant(-0),
      fc.constant([1, undefined, 2]),
      fc.constant({ toJSON: () => 'as json' }),
    );
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        fc.jsonValue({ noUnicodeString: false }),
        awkward,
        fc.array(tie('node'), { maxLength: 4 }),
        fc.dictionary(fc.string(), tie('node'), { maxKeys: 5 }),
      ),
    })).node;
    fc.assert(
      fc.property(value, (input) => {
        expect(callFingerprint(lookup, input)).toBe(definedFingerprint(input));
      }),
      { numRuns: 1_000 },
    );
  });

  it('changes with the arguments and ignores key order', () => {
    const a = callFingerprint(lookup, { query: 'a', page: 1 });
    expect(callFingerprint(lookup, { page: 1, query: 'a' })).toBe(a);
    expect(callFingerprint(lookup, { query: 'b', page: 1 })).not.toBe(a);
  });
});
