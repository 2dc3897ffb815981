import { type AuditLog, type AuditSink, deriveEventId, verbatimDigests } from '../audit/index.js';
import { VeridexError } from '../errors/index.js';
import { policyRule } from './policy-rule.js';
import { safetyClassDefaults } from './safety-class-defaults.js';
import type {
  PolicyDecision,
  PolicyRule,
  Proposal,
  ProposalEvaluator,
  RuleResult,
  Verdict,
} from './types.js';

/** Options for {@link PolicyEngine}. */
export interface PolicyEngineOptions {
  rules?: readonly PolicyRule[];
  /** Add the built-in safety-class defaults at priority 0. Default true. */
  safetyClassDefaults?: boolean;
  /** Where `policy_decision` and `policy_error` events go (one per proposal, replay-safe). */
  audit?: AuditLog;
  now?: () => Date;
}

const RESTRICTIVENESS: Record<Verdict, number> = { allow: 0, escalate: 1, deny: 2 };

const DEFAULT_ALLOW = { ruleId: 'default.allow', ruleName: 'No rule objected' } as const;

/**
 * Decides every proposal (tool call, memory write, hand-off) before anything runs.
 *
 * Rules run in descending priority. The highest priority at which any rule has an opinion
 * decides, and within it the most restrictive verdict wins (deny > escalate > allow); lower
 * priorities are not consulted. A rule that throws denies the proposal (fail closed) and
 * writes a `policy_error` event. Every decision is a `policy_decision` event naming its rule.
 *
 * @example
 * const policy = new PolicyEngine({ rules: [rules.denyTools(['shell'])], audit });
 * const decision = await policy.evaluate(proposal); // { verdict: 'deny', ruleId: 'deny_tools', ... }
 */
export class PolicyEngine implements ProposalEvaluator {
  readonly #rules: PolicyRule[] = [];
  readonly #audit: AuditLog | undefined;
  readonly #now: () => Date;

  constructor(options: PolicyEngineOptions = {}) {
    this.#audit = options.audit;
    this.#now = options.now ?? (() => new Date());
    this.use(...(options.rules ?? []));
    if (options.safetyClassDefaults ?? true) this.use(safetyClassDefaults);
  }

  /** Adds rules (validated by {@link policyRule}). Returns the engine for chaining. */
  use(...rules: readonly PolicyRule[]): this {
    for (const rule of rules) this.#rules.push(policyRule(rule));
    // Stable sort: equal priorities keep registration order, so decisions are deterministic.
    this.#rules.sort((a, b) => b.priority - a.priority);
    return this;
  }

  /** The registered rules, highest priority first. */
  get rules(): readonly PolicyRule[] {
    return this.#rules;
  }

  /**
   * Decides one proposal. `options.audit` redirects this evaluation's events (e.g. to an
   * `AuditBatch`, so they are written together with the caller's own). A rule that throws
   * denies (`policy_error`, fail closed) — except `db_unavailable`, which is rethrown: a rule
   * that cannot reach its database has no verdict, so the step fails and can be retried.
   *
   * @throws VeridexError `db_unavailable` from a rule.
   */
  async evaluate(proposal: Proposal, options: { audit?: AuditSink } = {}): Promise<PolicyDecision> {
    const now = this.#now();
    const audit = options.audit ?? this.#audit;
    const evaluations: Array<{ ruleId: string; verdict: Verdict; reason?: string }> = [];
    let decided: { rule: PolicyRule; result: RuleResult; priority: number } | undefined;

    for (const rule of this.#rules) {
      if (decided && rule.priority < decided.priority) break;
      if (rule.appliesTo && !rule.appliesTo.includes(proposal.kind)) continue;
      let result: RuleResult | undefined;
      try {
        // Most rules decide synchronously: their result is used without a promise turn.
        const returned = rule.evaluate({ proposal, now });
        result = returned instanceof Promise ? await returned : returned;
      } catch (error) {
        // A rule that cannot reach its database has no verdict, and a denial stored as the
        // call's answer would outlive the outage (an approved payment checkpointed as denied).
        // The step fails instead — nothing runs, so still fail-closed — and stays resumable.
        if (VeridexError.is(error, 'db_unavailable')) throw error;
        const message = error instanceof Error ? error.message : String(error);
        result = {
          verdict: 'deny',
          reason: `policy rule "${rule.id}" failed: ${message}`,
          code: 'policy_error',
        };
        await audit?.append({
          threadId: proposal.threadId,
          runId: proposal.runId,
          eventId: deriveEventId(proposal.threadId, 'policy_error', proposal.hash, rule.id),
          type: 'policy_error',
          payload: { ruleId: rule.id, proposalHash: proposal.hash, error: message },
        });
      }
      if (!result) continue;
      // Keys in code-unit order, the order of the canonical form the decision event is hashed in.
      evaluations.push(
        result.reason
          ? { reason: result.reason, ruleId: rule.id, verdict: result.verdict }
          : { ruleId: rule.id, verdict: result.verdict },
      );
      if (!decided || RESTRICTIVENESS[result.verdict] > RESTRICTIVENESS[decided.result.verdict]) {
        decided = { rule, result, priority: rule.priority };
      }
    }

    const decision: PolicyDecision = decided
      ? { ...decided.result, ruleId: decided.rule.id, ruleName: decided.rule.name, evaluations }
      : { verdict: 'allow', ...DEFAULT_ALLOW, evaluations };
    const appended = audit?.append({
      threadId: proposal.threadId,
      runId: proposal.runId,
      eventId: deriveEventId(proposal.threadId, 'policy_decision', proposal.hash),
      type: 'policy_decision',
      ...verbatimDigests(describeDecision(proposal, decision), ['proposalHash']),
    });
    if (appended) await appended; // an AuditBatch queues synchronously
    return decision;
  }
}

// The payload of a `policy_decision` event, keys in code-unit order (the order of the canonical
// form it is hashed in).
function describeDecision(proposal: Proposal, decision: PolicyDecision): Record<string, unknown> {
  const payload: Record<string, unknown> = {
    evaluations: decision.evaluations,
    proposalHash: proposal.hash,
    proposalKind: proposal.kind,
  };
  if (decision.reason) payload.reason = decision.reason;
  if (decision.verdict === 'escalate') payload.route = decision.route;
  payload.ruleId = decision.ruleId;
  payload.ruleName = decision.ruleName;
  if (proposal.kind === 'tool') {
    payload.toolCallId = proposal.toolCallId;
    payload.toolName = proposal.toolName;
  }
  payload.verdict = decision.verdict;
  return payload;
}
