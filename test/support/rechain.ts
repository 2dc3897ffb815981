import { GENESIS_HASH, hashTraceEvent, type TraceEvent } from '../../src/audit/index.js';

/**
 * What an insider with write access to the audit table does after editing events: recompute
 * every link and hash, so the chain is self-consistent again (only an earlier bundle, a
 * published head or a signature they cannot make tells it apart).
 */
export function rechain(events: readonly TraceEvent[]): TraceEvent[] {
  let previousEventHash = GENESIS_HASH;
  return events.map((event) => {
    const linked = { ...event, previousEventHash };
    const hash = hashTraceEvent(linked);
    previousEventHash = hash;
    return { ...linked, hash };
  });
}

/** {@link rechain} after `edit` changed a deep copy of `events`. */
export function rewriteEvents(
  events: readonly TraceEvent[],
  edit: (events: TraceEvent[]) => TraceEvent[],
): TraceEvent[] {
  return rechain(edit(structuredClone([...events])));
}
