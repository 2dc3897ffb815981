import { VeridexError } from '../errors/index.js';
import type { PolicyEngine } from '../policy/index.js';
import { lookAlike } from './safety-class-config.js';

/**
 * Checks that every tool a protecting rule (`rules.requireApproval`, `rules.denyTools`) names
 * is one of `known` — a misspelt name would leave the tool it meant unapproved or allowed
 * (README "Fail closed: no silent safety class"). Rules created with `unknownToolsAllowed`
 * are skipped.
 * @throws VeridexError `config_invalid` naming the rule, the unknown names and look-alikes.
 */
export function checkProtectedNames(
  policy: PolicyEngine,
  known: readonly string[],
  where: string,
): void {
  for (const rule of policy.rules) {
    if (!rule.protects || rule.protects.unknownToolsAllowed) continue;
    const unknown = rule.protects.tools.filter((name) => !known.includes(name));
    if (unknown.length === 0) continue;
    const hints = unknown
      .map((name) => [name, lookAlike(name, known)] as const)
      .filter(([, near]) => near !== undefined)
      .map(([name, near]) => `${JSON.stringify(name)} looks like ${JSON.stringify(near)}`);
    throw new VeridexError(
      'config_invalid',
      `${where}: policy rule "${rule.id}" names ${unknown.map((name) => JSON.stringify(name)).join(', ')}, but no tool has that name (tools: ${known.length === 0 ? 'none' : known.map((name) => JSON.stringify(name)).join(', ')}).${hints.length > 0 ? ` Did you mean: ${hints.join('; ')}?` : ''} A rule naming a missing tool protects nothing; pass unknownToolsAllowed: true to the rule if the policy is shared by agents with other tools.`,
    );
  }
}
