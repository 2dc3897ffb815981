import { policyRule } from '../policy-rule.js';
import type { PolicyRule, ToolProposal } from '../types.js';

/** Options shared by the list rules. */
export interface ToolListOptions {
  /** Default 100: above the safety-class defaults (0) and most custom rules. */
  priority?: number;
  id?: string;
  /**
   * `denyTools` only: the node or agent this policy governs checks every name against its
   * tools (`config_invalid` for one it lacks: a typo would leave the tool it meant allowed);
   * `true` waives that for a policy shared by agents with different tools.
   */
  unknownToolsAllowed?: boolean;
}

/**
 * Denies the named tools outright.
 * @example new PolicyEngine({ rules: [rules.denyTools(['shell_exec', 'delete_user'])] })
 */
export function denyTools(names: readonly string[], options: ToolListOptions = {}): PolicyRule {
  const denied = new Set(names);
  return policyRule({
    id: options.id ?? 'deny_tools',
    name: `Deny tools: ${names.join(', ')}`,
    priority: options.priority ?? 100,
    appliesTo: ['tool'],
    protects: {
      tools: [...names],
      ...(options.unknownToolsAllowed ? { unknownToolsAllowed: true } : {}),
    },
    evaluate: ({ proposal }) =>
      denied.has((proposal as ToolProposal).toolName)
        ? {
            verdict: 'deny',
            reason: `tool "${(proposal as ToolProposal).toolName}" is on the deny list`,
          }
        : undefined,
  });
}

/**
 * Denies every tool NOT named (an allowlist). Named tools fall through to other rules.
 * @example rules.onlyTools(['get_balance', 'transfer'])
 */
export function onlyTools(names: readonly string[], options: ToolListOptions = {}): PolicyRule {
  const allowed = new Set(names);
  return policyRule({
    id: options.id ?? 'only_tools',
    name: `Only tools: ${names.join(', ')}`,
    priority: options.priority ?? 100,
    appliesTo: ['tool'],
    evaluate: ({ proposal }) =>
      allowed.has((proposal as ToolProposal).toolName)
        ? undefined
        : {
            verdict: 'deny',
            reason: `tool "${(proposal as ToolProposal).toolName}" is not on the allowlist`,
          },
  });
}

/**
 * Explicitly allows the named tools, overriding the safety-class defaults below its priority
 * (e.g. a financial tool that may run without approval in a sandbox environment).
 * Default priority 10. Deny rules at a higher priority still win.
 */
export function allowTools(names: readonly string[], options: ToolListOptions = {}): PolicyRule {
  const allowed = new Set(names);
  return policyRule({
    id: options.id ?? 'allow_tools',
    name: `Allow tools: ${names.join(', ')}`,
    priority: options.priority ?? 10,
    appliesTo: ['tool'],
    evaluate: ({ proposal }) =>
      allowed.has((proposal as ToolProposal).toolName)
        ? {
            verdict: 'allow',
            reason: `tool "${(proposal as ToolProposal).toolName}" is explicitly allowed`,
          }
        : undefined,
  });
}
