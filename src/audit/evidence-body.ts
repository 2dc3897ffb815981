import type { TraceEvent } from './trace-event.js';

/** DSSE payload type of a Veridex evidence bundle. */
export const EVIDENCE_PAYLOAD_TYPE = 'application/vnd.veridex.evidence+json';

/** Format version written into every evidence body. */
export const EVIDENCE_FORMAT = 'veridex.evidence/v1';

/** The signed content of an evidence bundle (the DSSE payload, as canonical JSON). */
export interface EvidenceBody {
  format: typeof EVIDENCE_FORMAT;
  threadId: string;
  /** Distinct run ids in order of first appearance. */
  runIds: string[];
  /** ISO 8601; defaults to the last event's timestamp so that sealing is deterministic. */
  createdAt: string;
  /** What the evidence is about, e.g. `{ appId, agentId }`. */
  subject?: Record<string, unknown>;
  /** Anything else the sealer wants signed alongside, e.g. a receipt summary. */
  extra?: Record<string, unknown>;
  /** The chain's length and last hash; a verifier checks both against `events`. */
  chain: { length: number; head: string };
  /** Number of events per type. */
  counts: Record<string, number>;
  /** The thread's complete chain, from genesis. */
  events: TraceEvent[];
}

/** Counts events by type (keys in first-seen order). */
export function countEventTypes(events: readonly TraceEvent[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const event of events) counts[event.type] = (counts[event.type] ?? 0) + 1;
  return counts;
}

/** Distinct run ids in order of first appearance. */
export function distinctRunIds(events: readonly TraceEvent[]): string[] {
  return [...new Set(events.map((event) => event.runId))];
}
