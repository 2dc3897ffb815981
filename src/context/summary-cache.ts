/** One cached summary: the text that stands for the first `coveredUnits` summarisable units. */
export interface CachedSummary {
  /** How many history units (from the start, the latest user message excluded) it covers. */
  coveredUnits: number;
  /** SHA-256 over the summariser id and the fingerprints of the covered messages. */
  spanHash: string;
  summary: string;
  /** Exact tokens of `summary` under the compiler's tokenizer. */
  tokens: number;
  /** Id of the summariser that wrote it. */
  summarizer: string;
}

/**
 * Where the compiler keeps summaries, per thread, so the same span is not summarised again on
 * every turn. Entries are only ever added; a store keeps a few recent ones per thread.
 */
export interface SummaryCache {
  /** The thread's most recent entries, newest first. */
  recent(threadId: string): Promise<CachedSummary[]>;
  /** Stores an entry (an existing entry with the same span hash is kept). */
  put(threadId: string, entry: CachedSummary): Promise<void>;
}

/** Entries kept per thread: enough for a fork or two of the conversation. */
export const SUMMARIES_KEPT_PER_THREAD = 4;

/**
 * A {@link SummaryCache} in process memory, bounded to `maxThreads` threads (least recently
 * written dropped first). The compiler's default when no database is given.
 */
export class MemorySummaryCache implements SummaryCache {
  readonly #threads = new Map<string, CachedSummary[]>();
  readonly #maxThreads: number;

  constructor(options: { maxThreads?: number } = {}) {
    this.#maxThreads = options.maxThreads ?? 10_000;
  }

  async recent(threadId: string): Promise<CachedSummary[]> {
    return [...(this.#threads.get(threadId) ?? [])];
  }

  async put(threadId: string, entry: CachedSummary): Promise<void> {
    const entries = this.#threads.get(threadId) ?? [];
    this.#threads.delete(threadId);
    if (!entries.some((existing) => existing.spanHash === entry.spanHash)) {
      entries.unshift({ ...entry });
      entries.length = Math.min(entries.length, SUMMARIES_KEPT_PER_THREAD);
    }
    this.#threads.set(threadId, entries);
    if (this.#threads.size > this.#maxThreads) {
      this.#threads.delete(this.#threads.keys().next().value!);
    }
  }
}
