import { describe, expect, it } from 'vitest';
import { IMPORT_SLICE_MS, ImportPace, unboundedPace } from '../../src/adapters/import-pace.js';

const busy = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // Synchronous import work.
  }
};

describe('ImportPace', () => {
  it('lets the event loop turn once a slice of synchronous work is used up', async () => {
    const pace = unboundedPace();
    let ran = false;
    setImmediate(() => {
      ran = true;
    });
    busy(IMPORT_SLICE_MS + 5);
    await pace.step();
    expect(ran).toBe(true);
  });

  it('does not yield before the slice is used up', async () => {
    const pace = unboundedPace();
    let ran = false;
    setImmediate(() => {
      ran = true;
    });
    await pace.step();
    expect(ran).toBe(false);
  });

  it('ends the import through its error once the deadline has passed', async () => {
    const pace = new ImportPace(performance.now() + 5, () => {
      throw new Error('deadline passed');
    });
    await pace.step();
    busy(10);
    await expect(pace.step()).rejects.toThrow('deadline passed');
  });
});
