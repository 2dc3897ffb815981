import { randomUUID } from 'node:crypto';
import type { IdempotencyOptions } from './execute-tool-types.js';
import { idempotencyKeyFor } from './idempotency-key.js';
import { idempotencySettings } from './idempotency-settings.js';
import type { IdempotencyStore, StoredFailure } from './idempotency-store.js';
import type { AnyGovernedTool } from './types.js';

/**
 * Settles a call that will never run — one its approvers ended with its turn — as a failure in
 * the at-most-once ledger under its (thread, call id) key, so a later call under the same id
 * replays the refusal instead of running on an approval it once received (README "Approvals in
 * LangChain's HITL protocol"). A key that already has an outcome keeps it.
 */
export async function recordRefusal(
  tool: AnyGovernedTool,
  call: { threadId: string; toolCallId: string },
  failure: StoredFailure,
  setting: IdempotencyStore | IdempotencyOptions | undefined,
): Promise<void> {
  const { store, leaseMs } = idempotencySettings(tool, setting);
  const key = idempotencyKeyFor(call);
  const owner = randomUUID();
  const reservation = await store.reserve(key, { owner, toolName: tool.name, leaseMs });
  if (reservation.status !== 'acquired') return;
  await store.fail(key, owner, failure);
}
