import { VeridexError } from '../../errors/index.js';
import type { ApprovalRoute } from '../../tools/types.js';
import { policyRule } from '../policy-rule.js';
import type { PolicyRule, ToolProposal } from '../types.js';

/** Options for {@link requireApproval}. */
export interface RequireApprovalOptions {
  /** The tools whose every call waits for people. */
  tools: readonly string[];
  /** Who must approve (default `human_required`: one approver). */
  route?: Exclude<ApprovalRoute, 'auto'>;
  id?: string;
  /**
   * Default 50: above `allowTools` (10) and the safety-class defaults (0), so an allow-list
   * cannot quietly waive it; deny lists (100) still win.
   */
  priority?: number;
  /**
   * The node or agent this policy governs checks every name of `tools` against its tools
   * (`config_invalid` for one it lacks: a typo would leave the tool it meant unapproved).
   * `true` waives that for a policy shared by agents with different tools.
   */
  unknownToolsAllowed?: boolean;
}

const ROUTES: ReadonlySet<string> = new Set(['human_required', 'dual_approval', 'policy_pack']);

/**
 * Every call to the named tools waits for approval — the counterpart of an `interruptOn`
 * entry of LangChain's `humanInTheLoopMiddleware` (README "Approvals in LangChain's HITL
 * protocol"), with signed decisions and a quorum by route.
 *
 * @throws VeridexError `config_invalid` for an empty or non-string tool list or an unknown route.
 * @example rules.requireApproval({ tools: ['send_email'] })
 * @example rules.requireApproval({ tools: ['refund'], route: 'dual_approval' })
 */
export function requireApproval(options: RequireApprovalOptions): PolicyRule {
  const { tools } = options;
  if (
    !Array.isArray(tools) ||
    tools.length === 0 ||
    tools.some((name) => typeof name !== 'string' || name === '')
  ) {
    throw new VeridexError(
      'config_invalid',
      'rules.requireApproval: tools must list at least one tool name.',
    );
  }
  const route = options.route ?? 'human_required';
  if (!ROUTES.has(route)) {
    throw new VeridexError(
      'config_invalid',
      `rules.requireApproval: route "${String(route)}" is not one of ${[...ROUTES].join(', ')}.`,
    );
  }
  const named = new Set(tools);
  return policyRule({
    id: options.id ?? 'require_approval',
    name: `Approval required (${route}): ${tools.join(', ')}`,
    priority: options.priority ?? 50,
    appliesTo: ['tool'],
    protects: {
      tools: [...tools],
      ...(options.unknownToolsAllowed ? { unknownToolsAllowed: true } : {}),
    },
    evaluate: ({ proposal }) => {
      const name = (proposal as ToolProposal).toolName;
      return named.has(name)
        ? { verdict: 'escalate', route, reason: `every call to "${name}" needs approval` }
        : undefined;
    },
  });
}
