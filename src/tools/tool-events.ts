import type { AppendEventInput } from '../audit/audit-log.js';
import { verbatimDigests } from '../audit/digest-fields.js';
import { contentHash } from '../audit/sha256.js';
import { deriveEventId, type TraceEventType } from '../audit/trace-event.js';
import type { ToolRunFailure, ToolRunSuccess } from './execute-tool-types.js';
import type { SanitizerFinding } from './sanitize-output.js';
import type { AnyGovernedTool } from './types.js';
import type { ViolationSummary } from './violation-tally.js';

/** The identity of one call's audit events. */
export interface EventScope {
  threadId: string;
  toolCallId: string;
  runId: string;
  turnIndex: number;
}

/** Error codes that mean someone tried something they should not: they also write a `security_event`. */
export const SECURITY_CODES = new Set<string>([
  'schema_pin_mismatch',
  'idempotency_conflict',
  'sandbox_violation',
  'secret_access_denied',
  'secret_not_found',
]);

// The digests the library computed: stored verbatim, never scanned for credentials.
const DIGEST_FIELDS = ['schemaHash', 'contentHash', 'idempotencyKey', 'proposalHash'];

function event(
  scope: EventScope,
  type: TraceEventType,
  payload: Record<string, unknown>,
  ...id: string[]
): AppendEventInput {
  return {
    threadId: scope.threadId,
    runId: scope.runId,
    turnIndex: scope.turnIndex,
    type,
    ...verbatimDigests(payload, DIGEST_FIELDS),
    eventId: deriveEventId(scope.threadId, type, scope.toolCallId, ...id),
  };
}

function toolFields(tool: AnyGovernedTool, scope: EventScope) {
  return {
    toolName: tool.name,
    toolCallId: scope.toolCallId,
    schemaHash: tool.schemaHash,
    safetyClass: tool.safetyClass,
    trust: tool.trust,
  };
}

/** `tool_executed`: hashes and sizes of what the model saw, never the content itself. */
export function executedEvent(
  tool: AnyGovernedTool,
  scope: EventScope,
  result: ToolRunSuccess,
): AppendEventInput {
  // Written out rather than spread from toolFields (this event is built for every call), keys in
  // code-unit order, the order its canonical form needs.
  return event(scope, 'tool_executed', {
    attempts: result.attempts,
    contentBytes: Buffer.byteLength(result.content),
    contentHash: contentHash(result.content),
    findings: result.findings.map((finding) => finding.kind),
    idempotencyKey: tool.idempotency === 'required' ? result.idempotencyKey : null,
    replayed: result.replayed,
    safetyClass: tool.safetyClass,
    schemaHash: tool.schemaHash,
    toolCallId: scope.toolCallId,
    toolName: tool.name,
    trust: tool.trust,
  });
}

/** `tool_failed` with the code and the model-safe message. */
export function failedEvent(
  tool: AnyGovernedTool,
  scope: EventScope,
  result: ToolRunFailure,
): AppendEventInput {
  return event(scope, 'tool_failed', {
    ...toolFields(tool, scope),
    code: result.code,
    message: result.message,
    attempts: result.attempts,
    replayed: result.replayed,
  });
}

/** `security_event` for a security-relevant failure code. */
export function securityFailureEvent(
  tool: AnyGovernedTool,
  scope: EventScope,
  result: ToolRunFailure,
): AppendEventInput {
  const { pinnedHash, currentHash, secret, capability, reason } = result.details;
  return event(
    scope,
    'security_event',
    {
      reason: result.code,
      ...toolFields(tool, scope),
      details: clean({ pinnedHash, currentHash, secret, capability, reason }),
    },
    result.code,
  );
}

/**
 * `security_event` listing side effects the sandbox refused (even those the tool swallowed):
 * each distinct one with its count, the total, and what the bound dropped (see ViolationTally).
 */
export function violationsEvent(
  tool: AnyGovernedTool,
  scope: EventScope,
  summary: ViolationSummary,
): AppendEventInput {
  return event(
    scope,
    'security_event',
    {
      reason: 'sandbox_violation',
      ...toolFields(tool, scope),
      ...summary,
    },
    'violations',
  );
}

/** `security_event` naming what the sanitiser removed (kinds and names, never values). */
export function sanitizedEvent(
  tool: AnyGovernedTool,
  scope: EventScope,
  findings: readonly SanitizerFinding[],
): AppendEventInput {
  return event(
    scope,
    'security_event',
    { reason: 'output_sanitized', ...toolFields(tool, scope), findings },
    'output_sanitized',
  );
}

function clean(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined));
}
