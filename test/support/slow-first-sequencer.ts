import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Test files that start many real processes (tsx children, PGlite on disk, the CLI), longest
 * first: 20–100 s each on a 2-core machine (2026-11-27), where most files take under 15.
 */
const SLOW_FILES = [
  'test/nodes/cross-process-approval.test.ts',
  'test/examples.test.ts',
  'test/db/pglite-lock.test.ts',
  'test/middleware/cross-process.test.ts',
  'test/adapters/portable-run-treasury.test.ts',
  'test/sandbox/local-process-guards.test.ts',
  'test/cli/demo-cli.test.ts',
  'test/cli/secret-across-processes.test.ts',
];

/**
 * Runs the slow files first, then the rest in vitest's own order. On a clean clone (CI) vitest
 * knows no durations and starts the largest files first, so a small file that runs for 80 s
 * (`examples.test.ts`) ran last, alone on one worker while the other sat idle.
 */
export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const index = SLOW_FILES.indexOf(relative(this.ctx.config.root, spec.moduleId));
      return index === -1 ? SLOW_FILES.length : index;
    };
    // Array.prototype.sort is stable: files of equal rank keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
