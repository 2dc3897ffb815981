import { GENESIS_HASH, hashTraceEvent, type TraceEvent } from './trace-event.js';

/** The outcome of {@link verifyChain}. */
export type ChainVerification =
  | { valid: true; length: number; head: string }
  | { valid: false; length: number; brokenAt: number; eventId: string | undefined; reason: string };

/**
 * Checks that `events` (one thread, in order) form an unbroken hash chain from
 * {@link GENESIS_HASH}: every hash recomputes and every event points at its predecessor.
 * Reports the first broken link; an edited event breaks its own hash, a dropped, inserted
 * or reordered one breaks the next link. `recomputeHashes: false` checks the links only
 * (cheap; for events just read from a store that hashed them).
 */
export function verifyChain(
  events: readonly TraceEvent[],
  options: { recomputeHashes?: boolean } = {},
): ChainVerification {
  const recompute = options.recomputeHashes ?? true;
  let previous = GENESIS_HASH;
  const threadId = events[0]?.threadId;
  for (let index = 0; index < events.length; index++) {
    const event = events[index] as TraceEvent;
    const fail = (reason: string): ChainVerification => ({
      valid: false,
      length: events.length,
      brokenAt: index,
      eventId: typeof event?.eventId === 'string' ? event.eventId : undefined,
      reason,
    });
    if (typeof event !== 'object' || event === null) return fail('event is not an object');
    if (event.threadId !== threadId) {
      return fail(`event belongs to thread "${event.threadId}", expected "${threadId}"`);
    }
    if (event.previousEventHash !== previous) {
      return fail(
        index === 0
          ? 'first event does not start from the genesis hash (events were dropped before it)'
          : 'previousEventHash does not match the previous event (an event was dropped, inserted or reordered)',
      );
    }
    if (recompute) {
      let recomputed: string;
      try {
        recomputed = hashTraceEvent(event);
      } catch (error) {
        return fail(`event cannot be canonicalised: ${(error as Error).message}`);
      }
      if (recomputed !== event.hash)
        return fail('hash does not match the event content (event was modified)');
    } else if (typeof event.hash !== 'string') {
      return fail('event has no hash');
    }
    previous = event.hash;
  }
  return { valid: true, length: events.length, head: previous };
}
