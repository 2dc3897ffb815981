import type { AppendEventInput } from '../audit/audit-log.js';
import { deriveEventId, type TraceEventType } from '../audit/trace-event.js';

/** Where a transfer's events go: its thread, run and idempotency key. */
export interface TransferScope {
  threadId: string;
  runId: string;
  toolCallId: string;
  idempotencyKey: string;
}

/**
 * One treasury audit event with a deterministic id — (thread, type, idempotency key, extra
 * parts) — so a step re-run after a resume or a crash appends nothing twice.
 */
export function transferEvent(
  scope: TransferScope,
  type: TraceEventType,
  payload: Record<string, unknown>,
  ...idParts: Array<string | number>
): AppendEventInput {
  return {
    threadId: scope.threadId,
    runId: scope.runId,
    type,
    eventId: deriveEventId(scope.threadId, type, scope.idempotencyKey, ...idParts),
    payload: { idempotencyKey: scope.idempotencyKey, toolCallId: scope.toolCallId, ...payload },
  };
}
