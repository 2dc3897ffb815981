import { policyRule } from '../policy-rule.js';
import type { PolicyRule, RuleResult, ToolProposal } from '../types.js';
import { MemoryUsageStore, type UsageStore } from '../usage-store.js';

/** Options for {@link rateLimit}. */
export interface RateLimitOptions {
  id?: string;
  /** Tools limited, each with its own window (default: every tool). */
  tools?: readonly string[];
  /** Calls allowed per window, per tool. */
  limit: number;
  windowMs: number;
  /** Count per thread instead of globally. Default false. */
  perThread?: boolean;
  /** Default: in memory; `PostgresUsageStore` persists and shares the count across processes. */
  store?: UsageStore;
  priority?: number;
}

/**
 * Limits calls per tool in a sliding window; over the limit is denied (code `rate_limited`
 * in the decision). Persisted through the store, so restarts don't reset it.
 *
 * @example rules.rateLimit({ tools: ['send_email'], limit: 10, windowMs: 60_000, store: new PostgresUsageStore(db) })
 */
export function rateLimit(options: RateLimitOptions): PolicyRule {
  const store = options.store ?? new MemoryUsageStore();
  const tools = options.tools && new Set(options.tools);
  return policyRule({
    id: options.id ?? 'rate_limit',
    name: `Rate limit ${options.limit} per ${options.windowMs} ms`,
    priority: options.priority ?? 50,
    appliesTo: ['tool'],
    evaluate: async ({ proposal, now }): Promise<RuleResult | undefined> => {
      const call = proposal as ToolProposal;
      if (tools && !tools.has(call.toolName)) return undefined;
      const scope = `rate:${call.toolName}${options.perThread ? `:${call.threadId}` : ''}`;
      const usage = await store.consume({
        scope,
        proposalHash: call.hash,
        cost: 1,
        limit: options.limit,
        since: new Date(now.getTime() - options.windowMs),
        now,
      });
      return usage.allowed
        ? undefined
        : {
            verdict: 'deny',
            code: 'rate_limited',
            reason: `"${call.toolName}" was called ${usage.used} times in the last ${options.windowMs} ms (limit ${options.limit}); try again later`,
          };
    },
  });
}
