import { policyRule } from '../policy-rule.js';
import type { PolicyRule, RuleResult, ToolProposal } from '../types.js';
import { MemoryUsageStore, type UsageStore } from '../usage-store.js';

/** The cost of one call of a tool: fixed, or computed from its arguments. */
export type ToolCost = number | ((args: Record<string, unknown>) => number);

/** Options for {@link callLimit}. */
export interface CallLimitOptions {
  id?: string;
  /** Fuel per run (a run is `ToolProposal.runId`). */
  perRun?: number;
  /** Fuel per thread, across runs. */
  perThread?: number;
  /** Cost per tool name (default 1 per call); e.g. `{ web_search: 5, llm_call: (a) => a.maxTokens / 1000 }`. */
  costs?: Readonly<Record<string, ToolCost>>;
  /** Where usage is counted. Default: in memory; use `PostgresUsageStore` to share across processes. */
  store?: UsageStore;
  priority?: number;
}

/**
 * Call budgets ("fuel", seed 004): every tool call costs fuel, static or computed per tool;
 * a call that would exceed the run's or thread's budget is denied with code
 * `budget_exhausted`. Usage is keyed by proposal hash, so a LangGraph node re-evaluating the
 * same call after a resume is not charged twice.
 *
 * @example rules.callLimit({ perRun: 20, perThread: 200, costs: { web_search: 5 } })
 */
export function callLimit(options: CallLimitOptions): PolicyRule {
  const store = options.store ?? new MemoryUsageStore();
  return policyRule({
    id: options.id ?? 'call_limit',
    name: `Call budget${options.perRun !== undefined ? ` ${options.perRun}/run` : ''}${options.perThread !== undefined ? ` ${options.perThread}/thread` : ''}`,
    priority: options.priority ?? 50,
    appliesTo: ['tool'],
    evaluate: async ({ proposal, now }): Promise<RuleResult | undefined> => {
      const call = proposal as ToolProposal;
      const cost = costOf(options.costs?.[call.toolName], call.arguments);
      const budgets: Array<[scope: string, limit: number | undefined, label: string]> = [
        [`fuel:run:${call.runId}`, options.perRun, 'run'],
        [`fuel:thread:${call.threadId}`, options.perThread, 'thread'],
      ];
      for (const [scope, limit, label] of budgets) {
        if (limit === undefined) continue;
        const usage = await store.consume({ scope, proposalHash: call.hash, cost, limit, now });
        if (!usage.allowed) {
          return {
            verdict: 'deny',
            code: 'budget_exhausted',
            reason: `${label} tool budget exhausted: ${usage.used} of ${limit} used, "${call.toolName}" costs ${cost}`,
          };
        }
      }
      return undefined;
    },
  });
}

function costOf(cost: ToolCost | undefined, args: Record<string, unknown>): number {
  const value = typeof cost === 'function' ? cost(args) : (cost ?? 1);
  // A cost function that returns garbage must not make a call free.
  return Number.isFinite(value) && value >= 0 ? value : Number.POSITIVE_INFINITY;
}
