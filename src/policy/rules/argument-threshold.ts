import type { ApprovalRoute } from '../../tools/types.js';
import { policyRule } from '../policy-rule.js';
import type { PolicyRule, RuleResult, ToolProposal } from '../types.js';
import { compareDecimal } from './decimal.js';

/** Options for {@link argumentThreshold}. */
export interface ArgumentThresholdOptions {
  id?: string;
  /** Tool names this applies to (default: all tools with the argument). */
  tools?: readonly string[];
  /** The argument holding the amount (a decimal string or number). */
  argument: string;
  /** Escalate (or deny) when the amount is at or above this. Compared exactly, never as floats. */
  atLeast: string | number | bigint;
  /** What to do at or above the threshold. Default: escalate with `route`. */
  action?: 'escalate' | 'deny';
  route?: ApprovalRoute;
  pack?: string;
  priority?: number;
}

/**
 * Escalates (or denies) tool calls whose numeric argument reaches a threshold.
 * A value that is not a plain decimal is denied: a threshold that can be dodged with
 * "1e6" or "50,000" would be advisory.
 *
 * @example rules.argumentThreshold({ tools: ['transfer'], argument: 'amount', atLeast: '10000', route: 'dual_approval' })
 */
export function argumentThreshold(options: ArgumentThresholdOptions): PolicyRule {
  const tools = options.tools && new Set(options.tools);
  const action = options.action ?? 'escalate';
  return policyRule({
    id: options.id ?? `argument_threshold.${options.argument}`,
    name: `${options.argument} ≥ ${String(options.atLeast)} → ${action === 'deny' ? 'deny' : (options.route ?? 'human_required')}`,
    priority: options.priority ?? 20,
    appliesTo: ['tool'],
    evaluate: ({ proposal }): RuleResult | undefined => {
      const call = proposal as ToolProposal;
      if (tools && !tools.has(call.toolName)) return undefined;
      if (!(options.argument in call.arguments)) return undefined;
      const value = call.arguments[options.argument];
      const comparison = compareDecimal(value, options.atLeast);
      if (comparison === undefined) {
        return {
          verdict: 'deny',
          reason: `argument "${options.argument}" is not a plain decimal number`,
        };
      }
      if (comparison < 0) return undefined;
      const reason = `${options.argument} ${String(value)} is at or above ${String(options.atLeast)}`;
      if (action === 'deny') return { verdict: 'deny', reason };
      return {
        verdict: 'escalate',
        route: options.route ?? 'human_required',
        reason,
        ...(options.pack ? { pack: options.pack } : {}),
      };
    },
  });
}
