import type { AppendEventInput, AuditLog } from './audit-log.js';
import type { TraceEvent } from './trace-event.js';

/**
 * Anything events can be appended to: an {@link AuditLog}, or an {@link AuditBatch} of one.
 * `append` returns a promise to await when it writes, nothing when it only queues.
 */
export interface AuditSink {
  append(input: AppendEventInput): Promise<unknown> | undefined;
}

/**
 * Collects events and writes them to the log in one `appendMany` — one transaction instead of
 * one per event on PostgreSQL. Order is kept; `flush` is safe to call repeatedly.
 *
 * @example
 * const batch = new AuditBatch(audit);
 * await policy.evaluate(proposal, { audit: batch });
 * await batch.flush();
 */
export class AuditBatch implements AuditSink {
  readonly #log: AuditLog;
  #pending: AppendEventInput[] = [];

  constructor(log: AuditLog) {
    this.#log = log;
  }

  /** Queues the event; it is stored by the next {@link flush}. */
  append(input: AppendEventInput): undefined {
    this.#pending.push(input);
  }

  /** Stores everything queued (grouped per thread, order kept) and empties the batch. */
  async flush(): Promise<TraceEvent[]> {
    const pending = this.#pending;
    this.#pending = [];
    const stored: TraceEvent[] = [];
    let start = 0;
    for (let index = 1; index <= pending.length; index++) {
      if (index === pending.length || pending[index]!.threadId !== pending[start]!.threadId) {
        stored.push(...(await this.#log.appendMany(pending.slice(start, index))));
        start = index;
      }
    }
    return stored;
  }
}
