import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromOpenAPI } from '../../src/adapters/index.js';
import { assertExpandedSize } from '../../src/adapters/openapi-schema.js';
import { VeridexError } from '../../src/errors/index.js';

/**
 * The attacker's document: level k is an object whose `fanout` properties all point at level
 * k-1 through a chain of `hops` one-hop references (`R = { $ref: R' }` … `{ $ref: S }`), so a
 * few kilobytes expand to fanout^levels nodes for anything that walks the references as a tree.
 */
function chainedRefs(levels: number, fanout = 2, hops = 1): Record<string, unknown> {
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
  const schemas: Record<string, unknown> = { S0: { type: 'string' } };
  for (let level = 1; level <= levels; level++) {
    for (let hop = 1; hop <= hops; hop++) {
      schemas[`R${level}_${hop}`] = ref(hop === hops ? `S${level - 1}` : `R${level}_${hop + 1}`);
    }
    const properties: Record<string, unknown> = {};
    for (let branch = 0; branch < fanout; branch++) properties[`p${branch}`] = ref(`R${level}_1`);
    schemas[`S${level}`] = { type: 'object', properties };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'chains', version: '1' },
    servers: [{ url: 'https://api.example.com' }],
    paths: {
      '/x': {
        post: {
          operationId: 'deep',
          requestBody: { content: { 'application/json': { schema: ref(`S${levels}`) } } },
          responses: { '200': { description: 'ok' } },
        },
      },
    },
    components: { schemas },
  };
}

/** The size of the tree a naive walker sees: every `$ref` followed (chains too), stopping past `cap`. */
function naiveExpandedSize(document: Record<string, unknown>, cap: number): number {
  let total = 0;
  const resolve = (ref: string): unknown =>
    ref
      .slice(2)
      .split('/')
      .reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], document);
  const walk = (node: unknown): void => {
    if (total > cap) return;
    if (typeof node !== 'object' || node === null) {
      total++;
      return;
    }
    const ref = (node as { $ref?: unknown }).$ref;
    if (typeof ref === 'string') {
      walk(resolve(ref));
      return;
    }
    total++;
    for (const child of Object.values(node)) walk(child);
  };
  walk(document);
  return total;
}

describe('fromOpenAPI against $ref chains', () => {
  it('counts what a chain of one-hop $refs expands to, as a walker of the tree would (property)', () => {
    const limit = 5_000;
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 2, max: 3 }),
        fc.integer({ min: 1, max: 4 }),
        (levels, fanout, hops) => {
          const document = chainedRefs(levels, fanout, hops);
          const refused = (() => {
            try {
              assertExpandedSize(document, limit);
              return false;
            } catch (error) {
              expect(VeridexError.is(error, 'import_too_large')).toBe(true);
              return true;
            }
          })();
          // The pre-pass counts more than the tree (each hop's `$ref` wrapper, so up to
          // hops + 1 times as much), never less.
          if (naiveExpandedSize(document, limit) > limit) expect(refused).toBe(true);
          if (refused) {
            expect(naiveExpandedSize(document, 2 * limit)).toBeGreaterThan(limit / (hops + 1));
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('refuses a 24-level chained document before the parser walks it, whatever the chain length', async () => {
    for (const hops of [1, 3]) {
      const document = chainedRefs(24, 2, hops);
      expect(JSON.stringify(document).length).toBeLessThan(12_000);
      const started = performance.now();
      const error = await fromOpenAPI(document, { lockFile: false }).catch((e: unknown) => e);
      // On main this ran the parser's validation over 2^24 nodes (minutes); the pre-pass is
      // linear in the document. A generous budget for a loaded machine.
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(VeridexError.is(error, 'import_too_large')).toBe(true);
      expect((error as Error).message).toContain('expands to more than');
    }
  });

  it('refuses a $ref chain that loops on itself, and a pointer that is not percent-decodable', async () => {
    const looping = chainedRefs(2);
    const schemas = (looping.components as { schemas: Record<string, unknown> }).schemas;
    schemas.R2_1 = { $ref: '#/components/schemas/R2_1' };
    const loop = await fromOpenAPI(looping, { lockFile: false }).catch((e: unknown) => e);
    expect(VeridexError.is(loop, 'import_invalid')).toBe(true);
    expect((loop as Error).message).toContain('$ref chain that loops');

    const undecodable = chainedRefs(2);
    (undecodable.components as { schemas: Record<string, unknown> }).schemas.S1 = {
      type: 'object',
      properties: { bad: { $ref: '#/components/%E0%A4%A' } },
    };
    const bad = await fromOpenAPI(undecodable, { lockFile: false }).catch((e: unknown) => e);
    expect(VeridexError.is(bad, 'import_invalid')).toBe(true);
    expect((bad as Error).message).toContain('not a valid pointer');
  });
});
