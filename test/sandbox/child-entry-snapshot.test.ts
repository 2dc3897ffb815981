import { expect, it } from 'vitest';
import { childEntryFor } from '../../src/sandbox/child-entry.js';

// A snapshot that fails to build falls back to a bundle (safe, but slower) — silently. This keeps
// the isolated child's own prelude snapshot-safe: a build-time failure in it (it once captured
// Atomics, which a snapshot being built does not have) would turn every snapshot test into a
// bundle test without a word.
it('builds an isolated child for a plain tool module as a startup snapshot, not a fallback bundle', async () => {
  const module = new URL('../attacks/fixtures/prewarm-hook-tools.ts', import.meta.url).href;
  const entry = await childEntryFor(module, [], { startup: 'snapshot', variant: 'isolated' });
  expect(entry.mode).toBe('snapshot');
});
