import type { TransferExecutor } from '../types.js';

/**
 * Test double helper: the same executor without `lookup`, i.e. a rail that cannot be asked
 * whether a transfer happened. In-doubt transfers are then escalated instead of settled.
 *
 * @example createTreasuryKit({ ..., transfer: { executor: withoutLookup(rail) } })
 */
export function withoutLookup(executor: TransferExecutor): TransferExecutor {
  return { execute: (request, options) => executor.execute(request, options) };
}
