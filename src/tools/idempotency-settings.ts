import type { IdempotencyOptions } from './execute-tool-types.js';
import type { IdempotencyStore } from './idempotency-store.js';
import { MemoryIdempotencyStore } from './memory-idempotency-store.js';
import type { AnyGovernedTool } from './types.js';

// Without a configured store, each tool instance keeps its own in-memory ledger for the life of
// the process. Per instance, not per process: two tools bound to different stores (two agents
// in one process, two test databases) can see the same thread id and scripted tool call id,
// and a process-wide ledger would answer the second with the first one's result, unexecuted.
const ledgers = new WeakMap<AnyGovernedTool, IdempotencyStore>();

function inMemoryLedgerOf(tool: AnyGovernedTool): IdempotencyStore {
  let ledger = ledgers.get(tool);
  if (!ledger) {
    ledger = new MemoryIdempotencyStore();
    ledgers.set(tool, ledger);
  }
  return ledger;
}

/**
 * The idempotency settings of one call: the given store (default: an in-memory ledger of this
 * tool instance, single-process, forgotten on restart), a 10 s wait for concurrent executions,
 * and a lease covering every attempt.
 */
export function idempotencySettings(
  tool: AnyGovernedTool,
  setting: IdempotencyStore | IdempotencyOptions | undefined,
): Required<IdempotencyOptions> {
  let options: IdempotencyOptions;
  if (setting === undefined) {
    options = { store: inMemoryLedgerOf(tool) };
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
