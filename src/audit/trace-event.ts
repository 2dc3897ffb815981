import { canonicalJson, canonicalString } from './canonical-json.js';
import { sha256Hex } from './sha256.js';

/**
 * Every event type the library writes, named `noun_verb` in the past tense.
 * Consumers (dashboards, evidence checks, golden traces) branch on these names.
 */
export const TRACE_EVENT_TYPES = [
  'run_started',
  'turn_started',
  'tool_proposed',
  'policy_decision',
  'policy_error',
  'approval_requested',
  'approval_decided',
  'approval_resolved',
  'tool_executed',
  'tool_failed',
  'memory_written',
  'memory_invalidated',
  'security_event',
  'context_compiled',
  'handoff_validated',
  'handoff_rejected',
  'budget_exhausted',
  'balance_checked',
  'counterparty_screened',
  'ceiling_reserved',
  'ceiling_committed',
  'ceiling_released',
  'transfer_executed',
  'transfer_in_doubt',
  'evidence_sealed',
  'run_completed',
  'run_failed',
  'run_suspended',
  'directory_changed',
  'run_resumed',
] as const;

/** One of {@link TRACE_EVENT_TYPES}. */
export type TraceEventType = (typeof TRACE_EVENT_TYPES)[number];

/** JSON-safe event payload (canonicalisable: no bigint, no undefined in arrays). */
export type EventPayload = Record<string, unknown>;

/**
 * One link of a thread's hash chain. `hash` covers every other field, including
 * `previousEventHash`, so changing, dropping, inserting or reordering any event breaks
 * every later link.
 */
export interface TraceEvent<Payload extends EventPayload = EventPayload> {
  /** Unique within the thread; derived deterministically so re-runs append nothing new. */
  eventId: string;
  threadId: string;
  runId: string;
  turnIndex: number;
  type: TraceEventType;
  /** ISO 8601 UTC time the event was first appended. */
  timestamp: string;
  payload: Payload;
  /** `hash` of the previous event in the thread, or {@link GENESIS_HASH} for the first. */
  previousEventHash: string;
  /** SHA-256 hex of the canonical JSON of all the fields above. */
  hash: string;
}

/** The `previousEventHash` of a thread's first event. */
export const GENESIS_HASH = '0'.repeat(64);

/** The fields an event's hash covers. */
export type UnhashedTraceEvent = Omit<TraceEvent, 'hash'>;

/**
 * `draft` linked to the chain of `threadId` after `previousEventHash`, with its `hash`. Built as
 * one object literal of a fixed shape: an object spread from the draft made hashing it about
 * twice as slow.
 */
export function linkEvent(
  draft: Omit<UnhashedTraceEvent, 'previousEventHash' | 'threadId'>,
  threadId: string,
  previousEventHash: string,
  hash: (event: UnhashedTraceEvent) => string,
): TraceEvent {
  const linked: UnhashedTraceEvent = {
    eventId: draft.eventId,
    threadId,
    runId: draft.runId,
    turnIndex: draft.turnIndex,
    type: draft.type,
    timestamp: draft.timestamp,
    payload: draft.payload,
    previousEventHash,
  };
  const event = linked as TraceEvent;
  event.hash = hash(linked);
  return event;
}

/**
 * Computes the chain hash of an event: SHA-256 hex of the RFC 8785 canonical JSON of every
 * field except `hash` itself.
 */
export function hashTraceEvent(event: UnhashedTraceEvent): string {
  // The envelope fields are fixed, so their canonical form is written directly (keys in
  // RFC 8785 order); only the payload needs the general canonicaliser. Equal to
  // canonicalJson({ eventId, ..., type }) — a test checks this — and about twice as fast,
  // which matters when a verifier re-hashes ten thousand events.
  const { eventId, previousEventHash, runId, threadId, timestamp, turnIndex, type } = event;
  if (
    typeof turnIndex !== 'number' ||
    !Number.isFinite(turnIndex) ||
    !isPlainString(eventId) ||
    !isPlainString(previousEventHash) ||
    !isPlainString(runId) ||
    !isPlainString(threadId) ||
    !isPlainString(timestamp) ||
    !isPlainString(type)
  ) {
    return sha256Hex(canonicalJson(pickHashedFields(event)));
  }
  const text =
    `{"eventId":${canonicalString(eventId)},"payload":${canonicalJson(event.payload)}` +
    `,"previousEventHash":${canonicalString(previousEventHash)},"runId":${canonicalString(runId)}` +
    `,"threadId":${canonicalString(threadId)},"timestamp":${canonicalString(timestamp)}` +
    `,"turnIndex":${JSON.stringify(turnIndex)},"type":${canonicalString(type)}}`;
  return sha256Hex(text);
}

function isPlainString(value: unknown): value is string {
  return (
    typeof value === 'string' && (value as string & { isWellFormed(): boolean }).isWellFormed()
  );
}

/** The hashed fields of an event, as a plain object. */
export function pickHashedFields(event: UnhashedTraceEvent): UnhashedTraceEvent {
  return {
    eventId: event.eventId,
    threadId: event.threadId,
    runId: event.runId,
    turnIndex: event.turnIndex,
    type: event.type,
    timestamp: event.timestamp,
    payload: event.payload,
    previousEventHash: event.previousEventHash,
  };
}

/**
 * A deterministic event id from the parts that identify one logical occurrence, e.g.
 * `deriveEventId(threadId, 'tool_executed', toolCallId)`. LangGraph re-runs a node from its
 * first line after `interrupt()` resumes; the same parts give the same id, so the re-run's
 * append is a no-op instead of a duplicate.
 */
export function deriveEventId(...parts: ReadonlyArray<string | number>): string {
  return `evt_${sha256Hex(canonicalJson(parts)).slice(0, 32)}`;
}
