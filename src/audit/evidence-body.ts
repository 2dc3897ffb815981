import type { TraceEvent } from './trace-event.js';
import type { SignedTreeHead } from './tree-head.js';

/** DSSE payload type of a Veridex evidence bundle. */
export const EVIDENCE_PAYLOAD_TYPE = 'application/vnd.veridex.evidence+json';

/** Format version written into every evidence body (v2: with the signed tree head). */
export const EVIDENCE_FORMAT = 'veridex.evidence/v2';

/** The first format, without tree heads: still verified (its tree is computed from its events). */
export const EVIDENCE_FORMAT_V1 = 'veridex.evidence/v1';

/**
 * Where a v2 bundle sits in its thread's transparency log. Every event is a leaf of the tree the
 * head signs (leaf i = event i), and the bundle holds them all, so a verifier recomputes the root:
 * that proves every event's inclusion at once (`proveEventInclusion` cuts one event's RFC 9162
 * audit path out, for showing it to someone without the rest of the thread).
 */
export interface EvidenceLog {
  /** The signed head of the thread's tree over exactly `events`. */
  treeHead: SignedTreeHead;
  /**
   * The thread's previous signed head (the one before this seal) and the RFC 9162 consistency
   * proof that this bundle's tree extends it: the link that makes successive bundles one history.
   */
  previous?: { treeHead: SignedTreeHead; consistency: string[] };
}

/** The signed content of an evidence bundle (the DSSE payload, as canonical JSON). */
export interface EvidenceBody {
  format: typeof EVIDENCE_FORMAT | typeof EVIDENCE_FORMAT_V1;
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
  /** The transparency-log position (v2 bundles). */
  log?: EvidenceLog;
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
