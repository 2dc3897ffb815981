import { setImmediate as yieldToEventLoop } from 'node:timers/promises';

/** Longest stretch of synchronous import work between two yields to the event loop (ms). */
export const IMPORT_SLICE_MS = 10;

/**
 * The pace of an importer's synchronous work (rebuilding schemas, the poisoning scan, the
 * listing's windows): {@link step} between two pieces of it lets timers and I/O run once
 * {@link IMPORT_SLICE_MS} have passed since the last yield, and ends the import through
 * `passed` (which throws) once the deadline has passed. So a hostile listing within its size
 * bounds holds the event loop for one piece at a time (one tool, one window of the listing),
 * not for the whole listing, and cannot make an import outlast its deadline by more than one
 * piece.
 */
export class ImportPace {
  private since = performance.now();

  /**
   * @param deadline `performance.now()` time after which the import is refused
   *   (`Number.POSITIVE_INFINITY`: never).
   * @param passed Throws the importer's error for a passed deadline.
   */
  constructor(
    readonly deadline: number,
    private readonly passed: () => never,
  ) {}

  /** Yields to the event loop when the slice is used up; throws once the deadline has passed. */
  async step(): Promise<void> {
    let now = performance.now();
    if (now - this.since >= IMPORT_SLICE_MS) {
      await yieldToEventLoop();
      now = performance.now();
      this.since = now;
    }
    if (now >= this.deadline) this.passed();
  }
}

/** A pace without a deadline: it only yields (importers without a time bound, tests). */
export const unboundedPace = (): ImportPace =>
  new ImportPace(Number.POSITIVE_INFINITY, () => {
    throw new Error('unreachable: an unbounded import has no deadline');
  });
