import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import SlowFirstSequencer from './test/support/slow-first-sequencer.js';

const src = fileURLToPath(new URL('./src/', import.meta.url));

export default defineConfig({
  resolve: {
    alias: [
      { find: /^@veridex\/langgraph$/, replacement: `${src}index.ts` },
      { find: /^@veridex\/langgraph\/(.*)$/, replacement: `${src}$1/index.ts` },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    // The official checkpoint validation suite uses global describe/it.
    globals: true,
    // Limits only stop a hung test: many tests start real processes (tsx, PGlite, bwrap,
    // Chromium), which take tens of seconds on a loaded 2-core machine. Tests wait on events
    // and conditions, never on these.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    // PGlite instances cost ~700 MB each; two workers keep a 2-core machine busy without swapping.
    maxWorkers: 2,
    setupFiles: ['test/support/setup.ts'],
    sequence: { sequencer: SlowFirstSequencer },
  },
});
