import type { TraceEvent, UnhashedTraceEvent } from './trace-event.js';

/** An event ready to be chained: everything but the chain fields, which the store assigns. */
export type ChainableEvent = Omit<UnhashedTraceEvent, 'previousEventHash'>;

/**
 * Where an {@link AuditLog} keeps its chains. Implementations must make `append` atomic per
 * thread: read the head, link, hash and store without another append interleaving.
 */
export interface AuditStore {
  /**
   * Links `events` (all of one thread, in order) to the thread's chain and stores them.
   * An event whose `eventId` is already in the chain is not stored again; the stored event
   * is returned in its place. `hash` computes an event's hash once it is linked.
   */
  append(
    threadId: string,
    events: readonly ChainableEvent[],
    hash: (event: UnhashedTraceEvent) => string,
  ): Promise<TraceEvent[]>;
  /** The thread's events in chain order (empty for an unknown thread). */
  list(threadId: string): Promise<TraceEvent[]>;
  /**
   * Every thread with events and its chain length, by thread id (what an operator signs and
   * publishes heads for). Optional for custom stores; both built-in stores have it.
   */
  threads?(): Promise<Array<{ threadId: string; length: number }>>;
}
