import type { AuditStore, ChainableEvent } from './audit-store.js';
import {
  GENESIS_HASH,
  linkEvent,
  type TraceEvent,
  type UnhashedTraceEvent,
} from './trace-event.js';

/** An {@link AuditStore} in process memory: for tests and quick starts. Lost on exit. */
export class MemoryAuditStore implements AuditStore {
  readonly #chains = new Map<string, { events: TraceEvent[]; byId: Map<string, TraceEvent> }>();

  async append(
    threadId: string,
    events: readonly ChainableEvent[],
    hash: (event: UnhashedTraceEvent) => string,
  ): Promise<TraceEvent[]> {
    let chain = this.#chains.get(threadId);
    if (!chain) {
      chain = { events: [], byId: new Map() };
      this.#chains.set(threadId, chain);
    }
    // Synchronous from here on: no other append can interleave.
    const result: TraceEvent[] = [];
    for (const draft of events) {
      const existing = chain.byId.get(draft.eventId);
      if (existing) {
        result.push(existing);
        continue;
      }
      const event = linkEvent(draft, threadId, chain.events.at(-1)?.hash ?? GENESIS_HASH, hash);
      chain.events.push(event);
      chain.byId.set(event.eventId, event);
      result.push(event);
    }
    return result;
  }

  async list(threadId: string): Promise<TraceEvent[]> {
    return [...(this.#chains.get(threadId)?.events ?? [])];
  }

  async threads(): Promise<Array<{ threadId: string; length: number }>> {
    return [...this.#chains]
      .filter(([, chain]) => chain.events.length > 0)
      .map(([threadId, chain]) => ({ threadId, length: chain.events.length }))
      .sort((a, b) => (a.threadId < b.threadId ? -1 : a.threadId > b.threadId ? 1 : 0));
  }
}
