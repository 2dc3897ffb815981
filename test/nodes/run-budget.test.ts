import { afterEach, describe, expect, it, vi } from 'vitest';
import { VeridexError } from '../../src/errors/index.js';
import { runSignal } from '../../src/nodes/run-budget.js';

describe('runSignal', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('aborts with budget_exhausted once the wall-clock limit has passed, not before', () => {
    // Fake timers: the limit is checked against a clock the test moves, never a race.
    vi.useFakeTimers();
    const signal = runSignal({ maxWallClockMs: 300 })!;
    vi.advanceTimersByTime(299);
    expect(signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    expect(signal.aborted).toBe(true);
    expect(VeridexError.is(signal.reason, 'budget_exhausted')).toBe(true);
    expect((signal.reason as Error).message).toContain('wall-clock limit of 300 ms');
  });

  it("follows the caller's signal too, and is absent when nothing limits the run", () => {
    vi.useFakeTimers();
    const caller = new AbortController();
    const signal = runSignal({ maxWallClockMs: 10_000, signal: caller.signal })!;
    caller.abort(new Error('user pressed stop'));
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).message).toBe('user pressed stop');
    expect(runSignal({})).toBeUndefined();
    expect(runSignal(undefined)).toBeUndefined();
  });
});
