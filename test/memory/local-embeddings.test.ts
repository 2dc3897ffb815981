import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { VeridexError } from '../../src/errors/index.js';
import { LocalEmbeddings } from '../../src/memory/index.js';
import { cosineSimilarity } from '../../src/memory/vector-codec.js';

const embeddings = new LocalEmbeddings();

describe('LocalEmbeddings', () => {
  it('returns unit-length vectors of the configured size, the same for the same text', async () => {
    const [first, again] = await embeddings.embedDocuments([
      'Alice prefers dark mode',
      'Alice prefers dark mode',
    ]);
    expect(first).toHaveLength(256);
    expect(first).toEqual(again);
    const norm = Math.sqrt(first!.reduce((sum, value) => sum + value * value, 0));
    expect(norm).toBeCloseTo(1, 10);
  });

  it('places spelling variants closer than unrelated sentences (lexical grade)', () => {
    const similarity = (a: string, b: string) =>
      cosineSimilarity(embeddings.embedSync(a), embeddings.embedSync(b));
    const variants = similarity('payments to Acme', 'payment for acme');
    const unrelated = similarity('payments to Acme', 'the deploy pipeline uses GitHub Actions');
    expect(variants).toBeGreaterThan(0.6);
    expect(unrelated).toBeLessThan(0.2);
  });

  it('ignores stopwords and case, and gives all zeros for text without content words', () => {
    expect(embeddings.embedSync('What is THE port?')).toEqual(embeddings.embedSync('port'));
    expect(embeddings.embedSync('the of and').every((value) => value === 0)).toBe(true);
  });

  it('rejects dimensions outside 8-4096 with config_invalid', () => {
    for (const dimensions of [4, 5000, 12.5]) {
      expect(() => new LocalEmbeddings({ dimensions })).toThrow(
        expect.objectContaining({ code: 'config_invalid' }),
      );
    }
    expect(
      VeridexError.is(
        catchError(() => new LocalEmbeddings({ dimensions: 1 })),
        'config_invalid',
      ),
    ).toBe(true);
  });

  it('always yields a finite unit or zero vector (property)', () => {
    const small = new LocalEmbeddings({ dimensions: 32 });
    fc.assert(
      fc.property(fc.string({ maxLength: 200 }), (text) => {
        const vector = small.embedSync(text);
        const norm = Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
        return (
          vector.length === 32 &&
          vector.every(Number.isFinite) &&
          (norm === 0 || Math.abs(norm - 1) < 1e-9)
        );
      }),
    );
  });
});

function catchError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}
