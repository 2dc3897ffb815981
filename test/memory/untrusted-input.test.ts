import { vector } from '@electric-sql/pglite-pgvector';
import { HumanMessage } from '@langchain/core/messages';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { llmExtractor } from '../../src/memory/index.js';
import { recordFilterSql, SqlParams } from '../../src/memory/sql.js';
import { scriptedModel } from '../../src/testing/index.js';
import { describeEachDatabase } from '../support/databases.js';
import { makeMemory } from './memory-fixture.js';

describe('untrusted input', () => {
  it('never puts filter keys or values into SQL text, only into parameters (property)', () => {
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.string({ minLength: 1, maxLength: 12 }),
          fc.oneof(fc.string(), fc.integer(), fc.constant(null)),
        ),
        (filter) => {
          const params = new SqlParams();
          const sql = recordFilterSql({ value: filter }, params);
          for (const [key, value] of Object.entries(filter)) {
            if (key.length > 3 && !/^[\w$ ]+$/.test(key)) expect(sql).not.toContain(key);
            expect(params.values).toContain(key);
            expect(params.values).toContain(JSON.stringify(value));
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('turns any model reply into a validated extraction, capped, or the fallback (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string(),
          fc.json(),
          fc
            .record({
              summary: fc.string(),
              facts: fc.array(fc.record({ content: fc.string(), confidence: fc.double() })),
            })
            .map((value) => JSON.stringify(value)),
        ),
        async (reply) => {
          const extraction = await llmExtractor(scriptedModel([reply]), { maxConfidence: 0.8 })({
            messages: [new HumanMessage('hello')],
            workingMemory: [],
            threadId: 't',
          });
          for (const fact of extraction.facts) {
            expect(typeof fact.content).toBe('string');
            expect(fact.confidence ?? 0).toBeLessThanOrEqual(0.8);
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});

describeEachDatabase(
  'recall with untrusted query text',
  ({ db }) => {
    it('answers any query text without a SQL or tsquery error (property)', async () => {
      const { memory } = makeMemory(db());
      await memory.write({ content: "O'Brien's invoice: 50% paid & due (soon) | later!" });
      const nasty = ["'", '\\', "O'Brien's", 'a & b | !c', 'x:* (y)', '%_%', '\u0000', 'sk-proj-'];
      for (const query of nasty) await expect(memory.recall(query)).resolves.toBeInstanceOf(Array);
      await fc.assert(
        fc.asyncProperty(fc.string({ maxLength: 40 }), async (query) => {
          expect(Array.isArray(await memory.recall(query, { reinforce: false }))).toBe(true);
        }),
        { numRuns: 25 },
      );
      const [hit] = await memory.recall("o'brien invoice");
      expect(hit?.record.content).toContain("O'Brien");
    });
  },
  { extensions: { vector } },
);
