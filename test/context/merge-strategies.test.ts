import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type BranchResult, type MergeConflict, mergeStrategies } from '../../src/context/index.js';
import { VeridexError } from '../../src/errors/index.js';

const Research = z.object({
  entities: z.array(z.string()),
  risk: z.object({ level: z.enum(['low', 'medium', 'high']), score: z.number() }),
  sources: z.array(z.string()).optional(),
});
type Research = z.infer<typeof Research>;

const branches: BranchResult<Research>[] = [
  {
    branch: 'pricing',
    payload: { entities: ['Acme', 'Globex'], risk: { level: 'low', score: 0.2 } },
    confidence: 0.3,
  },
  {
    branch: 'legal',
    payload: { entities: ['Acme'], risk: { level: 'high', score: 0.8 }, sources: ['contract.pdf'] },
    confidence: 0.9,
  },
  {
    branch: 'credit',
    payload: { entities: ['Initech', 'Acme'], risk: { level: 'low', score: 0.4 } },
    confidence: 0.5,
  },
];

function reasonOf(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return VeridexError.is(error, 'envelope_invalid') ? error.details.reason : error;
  }
  return 'no error';
}

describe('mergeStrategies.union', () => {
  it('unions arrays and objects and refuses a scalar disagreement by default', () => {
    const agreeing = branches.map((result) => ({
      ...result,
      payload: { ...result.payload, risk: { level: 'low' as const, score: 0.5 } },
    }));
    expect(mergeStrategies.union({ schema: Research }).merge(agreeing)).toEqual({
      // Branch order is by id (credit, legal, pricing), not by list order.
      entities: ['Initech', 'Acme', 'Globex'],
      risk: { level: 'low', score: 0.5 },
      sources: ['contract.pdf'],
    });
    expect(reasonOf(() => mergeStrategies.union().merge(branches))).toBe('merge_conflict');
  });

  it('settles a disagreement with the lowest branch id when asked to', () => {
    const merged = mergeStrategies.union<Research>({ onConflict: 'lowest_branch' }).merge(branches);
    expect(merged.risk).toEqual({ level: 'low', score: 0.4 });
  });

  it('validates the merge against the schema', () => {
    const broken = [
      { branch: 'a', payload: { entities: ['x'], risk: { level: 'extreme', score: 1 } } },
      { branch: 'b', payload: { entities: ['y'], risk: { level: 'low', score: 1 } } },
    ] as unknown as BranchResult<Research>[];
    const strategy = mergeStrategies.union({ schema: Research, onConflict: 'lowest_branch' });
    expect(reasonOf(() => strategy.merge(broken))).toBe('schema_mismatch');
    expect(strategy.merge(broken.slice(1)).risk.level).toBe('low');
  });

  it('refuses duplicate branch ids, negative confidence and an empty join', () => {
    expect(reasonOf(() => mergeStrategies.union().merge([branches[0]!, branches[0]!]))).toBe(
      'malformed',
    );
    expect(
      reasonOf(() => mergeStrategies.union().merge([{ ...branches[0]!, confidence: -1 }])),
    ).toBe('malformed');
    expect(reasonOf(() => mergeStrategies.union().merge([]))).toBe('malformed');
  });
});

describe('mergeStrategies.confidenceWeighted', () => {
  it('lets the summed confidence decide and orders array items by support', () => {
    const merged = mergeStrategies.confidenceWeighted({ schema: Research }).merge(branches);
    // level: low has 0.3 + 0.5 = 0.8 < high 0.9; score: each value once, 0.8 (legal, 0.9) wins.
    expect(merged.risk).toEqual({ level: 'high', score: 0.8 });
    // Acme 1.7, Initech 0.5, Globex 0.3.
    expect(merged.entities).toEqual(['Acme', 'Initech', 'Globex']);
  });

  it('averages numbers by confidence and drops weakly supported items when asked to', () => {
    const merged = mergeStrategies
      .confidenceWeighted<Research>({ numbers: 'average', minSupport: 0.3 })
      .merge(branches);
    expect(merged.risk.score).toBeCloseTo((0.3 * 0.2 + 0.9 * 0.8 + 0.5 * 0.4) / 1.7, 12);
    // Total confidence 1.7; 30% of it is 0.51: Globex (0.3) and Initech (0.5) fall below.
    expect(merged.entities).toEqual(['Acme']);
  });
});

describe('mergeStrategies.resolver', () => {
  it('hands every disagreement to the resolver with candidates in branch-id order', () => {
    const conflicts: MergeConflict[] = [];
    const merged = mergeStrategies
      .resolver<Research>((conflict) => {
        conflicts.push(conflict);
        return conflict.candidates.at(-1)!.value;
      })
      .merge(branches);
    expect(conflicts.map((conflict) => conflict.path.join('.'))).toEqual([
      'risk.level',
      'risk.score',
    ]);
    expect(conflicts[0]!.candidates.map((candidate) => candidate.branch)).toEqual([
      'credit',
      'legal',
      'pricing',
    ]);
    expect(merged.risk).toEqual({ level: 'low', score: 0.2 });
  });
});

describe('merge order independence', () => {
  const resultArbitrary = fc.uniqueArray(
    fc.record({
      branch: fc.string({ minLength: 1, maxLength: 6 }),
      payload: fc.record({
        tags: fc.array(fc.constantFrom('a', 'b', 'c', 'd'), { maxLength: 4 }),
        score: fc.double({ min: 0, max: 1, noNaN: true }),
        label: fc.constantFrom('x', 'y', 'z'),
        nested: fc.record({ flag: fc.boolean(), count: fc.integer({ min: 0, max: 3 }) }),
      }),
      confidence: fc.double({ min: 0, max: 1, noNaN: true }),
    }),
    { minLength: 1, maxLength: 6, selector: (result) => result.branch },
  );
  const strategies = [
    mergeStrategies.union({ onConflict: 'lowest_branch' }),
    mergeStrategies.confidenceWeighted(),
    mergeStrategies.confidenceWeighted({ numbers: 'average', minSupport: 0.2 }),
    mergeStrategies.resolver((conflict) => conflict.candidates.map((candidate) => candidate.value)),
  ];

  it('gives the same merge whatever order the branches finished in', () => {
    fc.assert(
      fc.property(resultArbitrary, fc.nat(), (results, seed) => {
        const shuffled = fc.sample(
          fc.shuffledSubarray(results, { minLength: results.length, maxLength: results.length }),
          { numRuns: 1, seed },
        )[0]!;
        for (const strategy of strategies) {
          expect(strategy.merge(shuffled)).toEqual(strategy.merge(results));
        }
      }),
      { numRuns: 200 },
    );
  });
});
