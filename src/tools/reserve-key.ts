import { VeridexError } from '../errors/index.js';
import type { IdempotencyStore, ReserveOptions, ReserveOutcome } from './idempotency-store.js';

/**
 * Reserves `key`, waiting (polling with backoff, at most `waitMs`) while another owner holds a
 * live lease. Resolves with the first outcome that is not `busy`.
 *
 * @throws VeridexError `idempotency_busy` when the holder is still busy after `waitMs` — another
 * execution of this very call is running, or crashed and its lease has not run out: no answer
 * exists yet, so the caller must not record one (the graph step fails and is retried later);
 * the caller's abort reason when `signal` aborts while waiting.
 */
export async function reserveOrWait(
  store: IdempotencyStore,
  key: string,
  options: ReserveOptions,
  waitMs: number,
  signal?: AbortSignal,
): Promise<Exclude<ReserveOutcome, { status: 'busy' }>> {
  const deadline = Date.now() + waitMs;
  for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
    const outcome = await store.reserve(key, options);
    if (outcome.status !== 'busy') return outcome;
    const left = deadline - Date.now();
    if (left <= 0) {
      throw new VeridexError(
        'idempotency_busy',
        `Tool "${options.toolName}" is already executing this call elsewhere (idempotency key ${key}); it did not finish within ${waitMs} ms. Try again later: once that execution ends, or its lease (until ${outcome.record.leaseExpiresAt}) runs out, the call gets its result or is recovered.`,
        { details: { key, state: outcome.record.state } },
      );
    }
    signal?.throwIfAborted();
    await new Promise((resolve) => setTimeout(resolve, Math.min(pause, left)));
  }
}
