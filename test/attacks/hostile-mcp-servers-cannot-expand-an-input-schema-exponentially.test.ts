// Adversary 8 (a hostile MCP server) against the importer's bounds (README "Converters": "the
// listing is bounded"; THREAT-MODEL: "Bound every importer and parser in time, memory and
// count, whatever the input does"). The listing's byte cap (8 MiB) and the per-schema cap
// (100 kB of JSON, 32 levels) measure an inputSchema as sent. But `z.fromJSONSchema` resolves
// `$ref`s into shared zod schemas, and the importer then renders the tool's JSON Schema
// (`jsonSchemaOf`, for the pin, the model view and `tool.jsonSchema`) with every shared
// schema inlined: a `$defs` chain in which each definition names the one before twice doubles
// at every level. 18 levels (1.5 KB) render to 5.7 MB in ~6 s and 760 MB of heap; 40 levels
// (~3 KB) never finish. OpenAPI documents are bounded before this point (`assertExpandedSize`,
// `toInputJsonSchema`'s node budget); MCP schemas are not.
//
// Fixed: `importJsonSchema` sizes the sanitised schema with every `$ref` written out before zod
// reads it (linear: each definition sized once, saturating) and refuses past 500,000 characters
// with `import_too_large` (`assertExpansionBounded`, src/adapters/schema-expansion.ts), for every
// importer; test/adapters/imported-schema-bounds.test.ts covers the others.
import { describe, expect, it } from 'vitest';
import { runBoundsProbe } from './fixtures/run-bounds-probe.js';

describe('an MCP inputSchema whose $defs double at each level', () => {
  it('is refused (or imported compactly) within seconds, without exhausting the heap', async () => {
    // The secure import needs milliseconds; 6 s and a 384 MB heap are generous caps.
    const run = await runBoundsProbe('mcp-ref-chain', 6_000, 384);
    expect(
      run.result,
      `no outcome: killed after the cap=${run.killed}, exit ${run.exitCode} (${run.signal}), ${Math.round(run.elapsedMs)} ms after ready; ${run.stderr.split('\n').find((line) => /heap|memory|Error/i.test(line)) ?? ''}`,
    ).toBeDefined();
    if (run.result!.outcome === 'refused') {
      expect(['import_too_large', 'import_invalid']).toContain(run.result!.code);
    } else {
      expect(run.result!.outcome).toBe('imported');
      expect(run.result!.schemaBytes as number).toBeLessThan(1_000_000);
    }
  });
});
