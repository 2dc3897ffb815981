import { VeridexError } from '../errors/index.js';
import type { PolicyRule } from './types.js';

/**
 * Declares a policy rule (validates its shape once, at definition time).
 *
 * @throws VeridexError `config_invalid` for a missing id or a non-finite priority.
 * @example
 * const bigTransfers = policyRule({
 *   id: 'large-transfer-dual', name: 'Large transfers need two approvers', priority: 10,
 *   appliesTo: ['tool'],
 *   evaluate: ({ proposal }) =>
 *     proposal.kind === 'tool' && Number(proposal.arguments.amount) >= 10_000
 *       ? { verdict: 'escalate', route: 'dual_approval', reason: 'amount ≥ 10,000' }
 *       : undefined,
 * });
 */
export function policyRule(rule: PolicyRule): PolicyRule {
  if (typeof rule.id !== 'string' || rule.id.length === 0) {
    throw new VeridexError('config_invalid', 'A policy rule needs a non-empty string id.');
  }
  if (!Number.isFinite(rule.priority)) {
    throw new VeridexError(
      'config_invalid',
      `Policy rule "${rule.id}" needs a finite numeric priority.`,
    );
  }
  if (typeof rule.evaluate !== 'function') {
    throw new VeridexError(
      'config_invalid',
      `Policy rule "${rule.id}" needs an evaluate(context) function.`,
    );
  }
  return Object.freeze({ ...rule });
}
