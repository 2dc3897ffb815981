/**
 * Wall-clock budgets per thread, measured per stretch of work in this process: a stretch starts
 * when a run starts (or a suspended run is resumed here) and ends when the run finishes or
 * suspends for people — time spent waiting for approvals never counts. The same rule as the
 * prebuilt agent's `maxWallClockMs` (one `run` or `resume` call).
 */
export class RunClock {
  readonly #limitMs: number | undefined;
  readonly #now: () => number;
  readonly #deadlines = new Map<string, number>();

  constructor(limitMs: number | undefined, now: () => number = Date.now) {
    this.#limitMs = limitMs;
    this.#now = now;
  }

  /** A run starts on `threadId`: a fresh stretch. */
  start(threadId: string): void {
    if (this.#limitMs !== undefined) this.#deadlines.set(threadId, this.#now() + this.#limitMs);
  }

  /** The run stops working (finished, or suspended for people). */
  stop(threadId: string): void {
    this.#deadlines.delete(threadId);
  }

  /** True when the current stretch of `threadId` ran out (one begins here if none is running). */
  exhausted(threadId: string): boolean {
    if (this.#limitMs === undefined) return false;
    if (!this.#deadlines.has(threadId)) this.start(threadId);
    return this.#now() >= this.#deadlines.get(threadId)!;
  }

  /** Milliseconds left in the current stretch (`undefined` without a limit). */
  remaining(threadId: string): number | undefined {
    if (this.#limitMs === undefined) return undefined;
    if (!this.#deadlines.has(threadId)) this.start(threadId);
    return Math.max(0, this.#deadlines.get(threadId)! - this.#now());
  }
}
