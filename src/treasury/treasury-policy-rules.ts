import { VeridexError } from '../errors/index.js';
import { policyRule } from '../policy/policy-rule.js';
import type { PolicyRule, Proposal, RuleResult, ToolProposal } from '../policy/types.js';
import type { AnyGovernedTool } from '../tools/types.js';
import { formatMoney } from './format-money.js';
import { addMoney, compareMoney, type Money } from './money.js';
import { parseMoney } from './parse-money.js';
import { checkAllowlist, screenSanctions, type TreasuryRuntime } from './treasury-runtime.js';

/** Priority of the kit's denying rules (sanctions, allowlist, limits). */
export const TREASURY_DENY_PRIORITY = 100;
/** Priority of the dual-approval rule: below the denials, so nothing denied is ever sent for approval. */
export const TREASURY_ESCALATE_PRIORITY = 90;

type TransferArguments = { to: string; amount: Money };

/**
 * The kit's policy rules for its `transfer` tool (matched by name and schema hash), for a
 * `PolicyEngine`. At priority 100, decided before any approval is requested: a denylisted or
 * sanctioned counterparty → deny `sanctions_hit`; not on a configured allowlist → deny
 * `policy_denied`; above `perTransactionMax` or beyond the rolling daily limit (a pre-check;
 * the ceiling reservation enforces it) → deny `ceiling_exceeded`. At priority 90: at or above
 * `dualApprovalThreshold` → escalate `dual_approval`. Smaller amounts have no opinion here
 * (the safety-class default asks one human for financial tools).
 */
export function treasuryPolicyRules(
  runtime: TreasuryRuntime,
  transfer: AnyGovernedTool,
): PolicyRule[] {
  const rule = (
    id: string,
    name: string,
    priority: number,
    decide: (args: TransferArguments) => RuleResult | undefined | Promise<RuleResult | undefined>,
  ) =>
    policyRule({
      id,
      name,
      priority,
      appliesTo: ['tool'],
      evaluate: async ({ proposal }) => {
        if (!isTransfer(proposal, transfer)) return undefined;
        const args = readArguments(runtime, proposal);
        return 'verdict' in args ? args : decide(args);
      },
    });

  const rules: PolicyRule[] = [
    rule(
      'treasury.sanctions',
      'Denylisted or sanctioned counterparties are refused',
      TREASURY_DENY_PRIORITY,
      async ({ to }) => {
        const check = await screenSanctions(runtime, to);
        if (check.status === 'clear') return undefined;
        return {
          verdict: 'deny',
          code: 'sanctions_hit',
          reason: `counterparty ${to} is refused: ${check.reason} (${check.source})`,
        };
      },
    ),
  ];
  if (runtime.allowlist) {
    rules.push(
      rule(
        'treasury.counterparty_allowlist',
        'Only allowlisted counterparties',
        TREASURY_DENY_PRIORITY,
        ({ to }) => {
          const check = checkAllowlist(runtime, to);
          return check
            ? {
                verdict: 'deny',
                code: 'policy_denied',
                reason: `counterparty ${to} ${check.reason}`,
              }
            : undefined;
        },
      ),
    );
  }
  if (runtime.perTransactionMax.size > 0) {
    rules.push(
      rule(
        'treasury.per_transaction_max',
        'Per-transaction maximum',
        TREASURY_DENY_PRIORITY,
        ({ amount }) => {
          const max = runtime.perTransactionMax.get(amount.currency);
          if (!max || compareMoney(amount, max) <= 0) return undefined;
          return {
            verdict: 'deny',
            code: 'ceiling_exceeded',
            reason: `${show(amount)} is above the per-transaction maximum of ${show(max)}`,
          };
        },
      ),
    );
  }
  if (runtime.dailyLimit.size > 0) {
    rules.push(
      rule(
        'treasury.daily_limit',
        'Rolling daily limit (pre-check)',
        TREASURY_DENY_PRIORITY,
        async ({ amount }) => {
          const limit = runtime.dailyLimit.get(amount.currency);
          if (!limit) return undefined;
          const since = new Date(runtime.now().getTime() - runtime.windowMs);
          const usage = await runtime.ceilings.usage(
            {
              appId: runtime.appId,
              agentId: runtime.agentId,
              currency: amount.currency,
              decimals: amount.decimals,
            },
            since,
          );
          const spent = addMoney(usage.committed, usage.pending);
          if (compareMoney(addMoney(spent, amount), limit) <= 0) return undefined;
          return {
            verdict: 'deny',
            code: 'ceiling_exceeded',
            reason: `${show(amount)} would exceed the rolling daily limit of ${show(limit)} (${formatMoney(spent)} already spent or reserved)`,
          };
        },
      ),
    );
  }
  if (runtime.dualApprovalThreshold.size > 0) {
    rules.push(
      rule(
        'treasury.dual_approval_threshold',
        'Large transfers need two approvers',
        TREASURY_ESCALATE_PRIORITY,
        ({ amount }) => {
          const threshold = runtime.dualApprovalThreshold.get(amount.currency);
          if (!threshold || compareMoney(amount, threshold) < 0) return undefined;
          return {
            verdict: 'escalate',
            route: 'dual_approval',
            reason: `${show(amount)} is at or above the dual-approval threshold of ${show(threshold)}`,
          };
        },
      ),
    );
  }
  return rules;
}

function isTransfer(proposal: Proposal, transfer: AnyGovernedTool): proposal is ToolProposal {
  return (
    proposal.kind === 'tool' &&
    proposal.toolName === transfer.name &&
    proposal.schemaHash === transfer.schemaHash
  );
}

/** The amount and counterparty of a transfer proposal; a deny verdict when they do not parse. */
function readArguments(
  runtime: TreasuryRuntime,
  proposal: ToolProposal,
): TransferArguments | RuleResult {
  const { to, amount, currency } = proposal.arguments;
  try {
    if (typeof to !== 'string' || to.trim() === '') {
      throw new VeridexError('input_invalid', 'the counterparty "to" is missing');
    }
    const money = parseMoney(amount, String(currency), { currencies: runtime.currencies });
    return { to: to.trim(), amount: money };
  } catch (error) {
    if (!VeridexError.is(error, 'input_invalid')) throw error;
    return { verdict: 'deny', code: 'input_invalid', reason: error.message };
  }
}

function show(money: Money): string {
  return formatMoney(money, { withCurrency: true });
}
