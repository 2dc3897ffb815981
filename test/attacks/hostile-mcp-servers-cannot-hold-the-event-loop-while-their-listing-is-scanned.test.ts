// Adversary 8 (a hostile MCP server) against the importer's time bound. The listing yields to
// the event loop between pages and honours `listTimeoutMs` (README "Converters": "yields to the
// event loop between pages"), but everything after the last page — rebuilding each schema,
// sanitising every schema string, the poisoning scan of each tool's view and of the listing's
// windows, the pins — runs synchronously, outside the deadline. The scan is linear with a
// large constant on needle-dense text (every pair needle re-finds every occurrence of its
// near word, e.g. `user`, once per pair: ~1 µs a byte), so a listing within the default
// bounds — here 60 tools of ~97 kB of enum values `user <n>`, 5.8 MB — holds the event loop
// for ~7 s on an idle 2-core machine (8 MiB: ~17 s): no timer, socket or other thread of the
// agent runs meanwhile, and `listTimeoutMs: 2000` does not shorten it.
//
// Fix (mechanism): process the listing in steps that yield to the event loop (per tool, and
// per scan window), under the same deadline as the listing (`import_too_large` when it
// passes); and cut the scan's constant — find the occurrences of each distinct near word once
// per text, not once per pair. (Fixed so: `src/adapters/import-pace.ts` and
// `needle-automaton.ts`; see OPEN-ATTACKS.md.)
import { describe, expect, it } from 'vitest';
import { importMcp } from './fixtures/poisoned-imports.js';

/** One tool whose input schema is just under the 100 kB cap, all enum values `user <n>`. */
function denseTool(index: number) {
  return {
    name: `lookup_${index}`,
    description: 'Looks a record up.',
    inputSchema: {
      type: 'object',
      properties: {
        mode: { type: 'string', enum: Array.from({ length: 8_100 }, (_, n) => `user ${n}`) },
      },
    },
  };
}

describe('a listing of needle-dense schemas within the default bounds', () => {
  it('does not hold the event loop for seconds while it is imported', async () => {
    const tools = Array.from({ length: 60 }, (_, index) => denseTool(index));
    let longest = 0;
    let last = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
    }, 20);
    try {
      const imported = await importMcp(tools, { limits: { listTimeoutMs: 2_000 } }).then(
        (list) => list.length,
        (error: unknown) => error,
      );
      await new Promise((resolve) => setTimeout(resolve, 60));
      // Secure either way: imported (60 tools) or refused at the deadline — but responsive.
      expect([60, 'import_too_large']).toContain(
        typeof imported === 'number' ? imported : (imported as { code?: string }).code,
      );
    } finally {
      clearInterval(ticker);
    }
    // A 20 ms timer late by 2 s (generous for a loaded machine: one tool takes ~0.2 s; today it is late ~7 s).
    expect(longest, `the event loop was held for ${Math.round(longest)} ms`).toBeLessThan(2_000);
  });
});
