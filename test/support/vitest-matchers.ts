// Types for `expect(...).toMatchTrace(...)` in this repository's tests. The published package
// does not augment vitest's types itself (a consumer without vitest would fail to compile);
// users who want the matcher typed add the same declaration (see the README's Golden traces).
import type { GoldenTrace, MatchTraceOptions } from '../../src/testing/index.js';

declare module 'vitest' {
  // biome-ignore lint/suspicious/noExplicitAny: vitest's own declaration uses this default.
  interface Matchers<T = any> {
    toMatchTrace(golden: GoldenTrace | string, options?: MatchTraceOptions): T;
  }
}
