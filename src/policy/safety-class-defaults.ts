import type { ApprovalRoute } from '../tools/types.js';
import { policyRule } from './policy-rule.js';
import type { PolicyRule, RuleResult, ToolProposal } from './types.js';

const ROUTE_STRICTNESS: Record<ApprovalRoute, number> = {
  auto: 0,
  human_required: 1,
  dual_approval: 2,
  policy_pack: 3,
};

/**
 * The built-in defaults per safety class, at priority 0 so that any user rule outranks them:
 * read → allow; write → allow (logged); network → allow only with a network allowlist;
 * financial → one human approval; privileged → two approvals. A tool's own `approval`
 * can make its route stricter, never looser: a financial tool declaring `auto` still
 * needs an approval unless a higher-priority rule explicitly allows it.
 */
export const safetyClassDefaults: PolicyRule = policyRule({
  id: 'default.safety_class',
  name: 'Safety-class defaults',
  priority: 0,
  appliesTo: ['tool'],
  evaluate: ({ proposal }) => decideByClass(proposal as ToolProposal),
});

function decideByClass(proposal: ToolProposal): RuleResult {
  const declared = proposal.tool.approval;
  const classRoute = classDefaultRoute(proposal);
  if (classRoute === 'deny') {
    return {
      verdict: 'deny',
      reason: `network tool "${proposal.toolName}" has no network allowlist; declare sandbox.networkAllowlist`,
    };
  }
  const route =
    declared && ROUTE_STRICTNESS[declared.route] > ROUTE_STRICTNESS[classRoute]
      ? declared.route
      : classRoute;
  if (route === 'auto') {
    return { verdict: 'allow', reason: `${proposal.safetyClass} tool: allowed by default` };
  }
  return {
    verdict: 'escalate',
    route,
    reason: `${proposal.safetyClass} tool "${proposal.toolName}" requires ${ROUTE_PHRASES[route]}`,
    ...(declared?.pack ? { pack: declared.pack } : {}),
    ...(declared?.timeoutMs ? { timeoutMs: declared.timeoutMs } : {}),
  };
}

const ROUTE_PHRASES: Record<Exclude<ApprovalRoute, 'auto'>, string> = {
  human_required: 'one human approval',
  dual_approval: 'two approvals from different people',
  policy_pack: 'approval through its escalation chain',
};

function classDefaultRoute(proposal: ToolProposal): ApprovalRoute | 'deny' {
  switch (proposal.safetyClass) {
    case 'read':
    case 'write':
      return 'auto';
    case 'network':
      return (proposal.tool.sandbox?.networkAllowlist?.length ?? 0) > 0 ? 'auto' : 'deny';
    case 'financial':
      return 'human_required';
    case 'privileged':
      return 'dual_approval';
  }
}
