// Adversary 8 (a hostile MCP server) against the importer's pacing (`import-pace.ts`). The work
// after the last page yields between tools, and the README / OPEN-ATTACKS.md say the event loop
// is now held "for one tool at a time (~0.1–0.4 s)". But each base64 run that decodes to text is
// scanned on its own (`locatePoisoning` calls `locatePercentLayers(run.decoded)` per run: a fresh
// folding, sentence table and two Aho–Corasick indexes each time), a fixed cost of ~0.25 ms per
// run. Warm, 64 kB of ordinary text is located in 4–8 ms; 64 kB of 16-character base64 runs (each
// decoding to "hello world!") in 180–250 ms (cold: 900 ms) — a 30–50x constant, still "linear",
// and the description (scanned in full up to 64 kB, though only 1,024 characters are kept), each
// schema string, the model view and the listing's windows are each scanned so.
//
// Steps: one tool, default limits, whose description is 3,850 such runs and whose input schema
// (just under the 100 kB cap) is an enum of 5,100 values, each base64 of "hello w 0001" …
// (harmless text); beside it the same tool in plain text ("hello w 0001" …, "hello world! …").
// Imported alternately (after one warm-up of each), the base64 tool holds the event loop for
// 0.54–0.81 s at once (cold 1–2.4 s), the plain tool 79–93 ms: 8x, and 1.5–2x the stated
// per-tool hold; `listTimeoutMs` cannot cut a step short (checked only between steps: with
// `listTimeoutMs: 2000`, three such tools were refused only after one held stretch of 2.24 s).
// Severity: low (bounded per step and by the deadline in total; the agent's timers, sockets and
// other threads stall ~1 s per tool of a hostile server instead of ~0.1–0.4 s).
// Fix (mechanism): scan every decoded run of a text in ONE pass — join the decoded runs with a
// separator no needle crosses (as `modelViewText` does for a view) and map findings back to
// their runs — so the per-run constant disappears; and/or check the pace inside a tool's
// scan (per view text, per 16 kB) rather than only between tools.
import { expect, it } from 'vitest';
import { importMcp } from './fixtures/poisoned-imports.js';

const shown = (n: number) => `hello w ${String(n).padStart(4, '0')}`;
const encoded = (text: string) => Buffer.from(text).toString('base64');

/** The description and enum of one tool: base64 runs, or the same words as plain text. */
function tool(asBase64: boolean) {
  const run = asBase64 ? encoded('hello world!') : 'hello world! abc';
  return {
    name: 'lookup',
    description: Array.from({ length: 3_850 }, () => run).join(' '),
    inputSchema: {
      type: 'object',
      properties: {
        mode: {
          type: 'string',
          enum: Array.from({ length: 5_100 }, (_, n) => (asBase64 ? encoded(shown(n)) : shown(n))),
        },
      },
    },
  };
}

/** The longest the event loop was held while `tools` were imported, in ms. */
async function longestHold(tools: unknown[]): Promise<number> {
  let longest = 0;
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 10);
  try {
    await new Promise((resolve) => setTimeout(resolve, 40));
    longest = 0;
    last = performance.now();
    const imported = await importMcp(tools).then(
      (list) => list.length,
      (error: unknown) => (error as { code?: string }).code,
    );
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect([tools.length, 'import_too_large']).toContain(imported);
  } finally {
    clearInterval(ticker);
  }
  return longest;
}

it('one tool of base64 runs holds the event loop no longer than a plain tool of its size', async () => {
  await longestHold([tool(false)]);
  await longestHold([tool(true)]);
  const plain: number[] = [];
  const runs: number[] = [];
  for (let round = 0; round < 3; round++) {
    plain.push(await longestHold([tool(false)]));
    runs.push(await longestHold([tool(true)]));
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[1]!;
  // Secure: the decoded layer adds at most a small factor to the plain scan (or the step is
  // split). Today: plain 79–93 ms, base64 542–811 ms (8x).
  const report = `plain ${plain.map(Math.round)} ms, base64 ${runs.map(Math.round)} ms`;
  expect(median(runs), report).toBeLessThan(3 * median(plain) + 100);
}, 120_000);
