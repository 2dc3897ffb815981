import { policyRule } from '../policy-rule.js';
import type { PolicyRule } from '../types.js';

/**
 * Groups rules under a name: their ids become `<name>.<id>`, so decisions and audit events
 * say which pack decided. Returns the renamed rules, ready for `new PolicyEngine({ rules })`.
 *
 * @example const treasury = policyPack('treasury', [rules.denyTools(['mint']), bigTransfers]);
 */
export function policyPack(name: string, rules: readonly PolicyRule[]): PolicyRule[] {
  return rules.map((rule) =>
    policyRule({ ...rule, id: `${name}.${rule.id}`, name: `${name}: ${rule.name}` }),
  );
}
