import type { IdempotencyStore } from './idempotency-store.js';
import { MemoryIdempotencyStore } from './memory-idempotency-store.js';
import type { IdempotencyOptions } from './run-tool-types.js';
import type { AnyGovernedTool } from './types.js';

let processStore: IdempotencyStore | undefined;

/**
 * The idempotency settings of one call: the given store (default: one in-memory store per
 * process), a 10 s wait for concurrent executions, and a lease covering every attempt.
 */
export function idempotencySettings(
  tool: AnyGovernedTool,
  setting: IdempotencyStore | IdempotencyOptions | undefined,
): Required<IdempotencyOptions> {
  let options: IdempotencyOptions;
  if (setting === undefined) {
    processStore ??= new MemoryIdempotencyStore();
    options = { store: processStore };
  } else {
    options = 'store' in setting ? setting : { store: setting };
  }
  const attempts = tool.retry?.attempts ?? 1;
  const perAttempt = (tool.timeoutMs ?? 0) + (tool.retry?.backoffMs ?? 0) * 2 ** attempts;
  const leaseMs = tool.timeoutMs === undefined ? 300_000 : perAttempt * attempts + 5_000;
  return {
    store: options.store,
    waitMs: options.waitMs ?? 10_000,
    leaseMs: options.leaseMs ?? leaseMs,
  };
}
