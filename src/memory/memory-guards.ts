import {
  type PolicyDecision,
  PolicyEngine,
  type Proposal,
  type ProposalEvaluator,
} from '../policy/index.js';
import { memoryRules } from './memory-rules.js';

/**
 * The protections `MemoryManager` applies to every write before its own policy, whatever that
 * policy holds. Weakening one is an explicit, named choice, recorded on every write it lets
 * through (`weakenedGuards` in `memory_written`).
 */
export interface MemoryGuards {
  /** Credential-shaped text in any field. Default `deny`; `allow` is the opt-out. */
  secrets: 'deny' | 'allow';
  /**
   * Writes whose source is tool output (derived from the conversation where one is known, see
   * `MemoryWriteContext.conversation`). Default `escalate` (a human decides; without an
   * approval manager nothing is stored); `deny`; `allow` is the opt-out.
   */
  toolSourcedWrites: 'escalate' | 'deny' | 'allow';
}

/** The secure defaults. */
export const DEFAULT_MEMORY_GUARDS: Readonly<MemoryGuards> = Object.freeze({
  secrets: 'deny',
  toolSourcedWrites: 'escalate',
});

const RESTRICTIVENESS = { allow: 0, escalate: 1, deny: 2 } as const;

/** The guards a configuration switches off, for the audit log (empty when none). */
export function weakenedGuards(guards: MemoryGuards): string[] {
  return [
    ...(guards.secrets === 'allow' ? ['secrets'] : []),
    ...(guards.toolSourcedWrites === 'allow' ? ['toolSourcedWrites'] : []),
  ];
}

/**
 * `policy`, preceded by the guards: a guard's denial stands without asking the policy (a
 * secret never reaches an approval queue either); otherwise the policy decides, and a guard's
 * escalation wins over a policy that would allow.
 */
export function guardedPolicy(policy: ProposalEvaluator, guards: MemoryGuards): ProposalEvaluator {
  const rules = [
    ...(guards.secrets === 'deny' ? [memoryRules.denySecrets()] : []),
    ...(guards.toolSourcedWrites === 'allow'
      ? []
      : [memoryRules.toolSourcedWrites(guards.toolSourcedWrites)]),
  ];
  if (rules.length === 0) return policy;
  const engine = new PolicyEngine({ rules, safetyClassDefaults: false });
  return {
    async evaluate(proposal: Proposal): Promise<PolicyDecision> {
      const guard = await engine.evaluate(proposal);
      const opinion = guard.evaluations.length > 0;
      if (opinion && guard.verdict === 'deny') return guard;
      const decision = await policy.evaluate(proposal);
      return opinion && RESTRICTIVENESS[guard.verdict] > RESTRICTIVENESS[decision.verdict]
        ? { ...guard, evaluations: [...guard.evaluations, ...decision.evaluations] }
        : decision;
    },
  };
}
