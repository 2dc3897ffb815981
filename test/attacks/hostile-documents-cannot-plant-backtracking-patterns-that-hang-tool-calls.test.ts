// Adversary 8 (a hostile MCP server or OpenAPI document), with adversary 1 (the model, which
// the document's own description or `examples` can steer) sending the argument. An imported
// schema's `pattern` and `patternProperties` keys are kept, and `z.fromJSONSchema` compiles
// them into ordinary JavaScript regular expressions, run by V8's backtracking engine on every
// call's arguments in the agent's own process (input validation, before policy and the
// sandbox). A pattern such as `^(a+)+$` takes time exponential in the length of a
// non-matching argument: 24 characters ~0.3 s, 48 characters for hours, with the event loop
// (every other thread of the agent) blocked. THREAT-MODEL: "Linear time for every parser and
// pattern that sees untrusted input"; `npm run lint:redos` checks the library's own patterns,
// not the ones a document brings.
//
// Fixed: before zod reads an imported schema, every `pattern` and `patternProperties` key (at
// any depth) must be proven linear-time by the importer's own check (`linearPatternRefusal`,
// src/adapters/linear-pattern.ts: it counts the routes a backtracking matcher can keep open,
// from every start of an unanchored pattern), else the import is refused with `import_invalid`
// naming the tool, the keyword and where it is.
import { describe, expect, it } from 'vitest';
import { type ProbeRun, runBoundsProbe } from './fixtures/run-bounds-probe.js';

function expectBounded(run: ProbeRun) {
  expect(
    run.result,
    `the call did not finish: killed after the cap=${run.killed}, exit ${run.exitCode} (${run.signal}), ${Math.round(run.elapsedMs)} ms after ready`,
  ).toBeDefined();
  // Refused at import, or the call answered (input_invalid) — either way within the cap.
  if (run.result!.outcome === 'refused') expect(run.result!.code).toBe('import_invalid');
  else expect(run.result).toMatchObject({ outcome: 'called', status: 'error' });
}

describe('an imported schema pattern that backtracks exponentially', () => {
  // A linear matcher answers in microseconds; 6 s is a generous cap on a loaded machine.
  it('MCP: a call with a 48-character non-matching argument is answered within the cap', async () => {
    expectBounded(await runBoundsProbe('mcp-pattern', 6_000));
  });

  it('MCP: a patternProperties key is matched against a 48-character property name within the cap', async () => {
    expectBounded(await runBoundsProbe('mcp-pattern-properties', 6_000));
  });

  it('OpenAPI: a query parameter pattern is matched against a 48-character argument within the cap', async () => {
    expectBounded(await runBoundsProbe('openapi-pattern', 6_000));
  });
});
