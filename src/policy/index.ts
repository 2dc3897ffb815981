export { PolicyEngine, type PolicyEngineOptions } from './policy-engine.js';
export { policyRule } from './policy-rule.js';
export { safetyClassDefaults } from './safety-class-defaults.js';
export type {
  HandoffProposal,
  MemorySource,
  MemoryWriteProposal,
  PolicyContext,
  PolicyDecision,
  PolicyRule,
  Proposal,
  ProposalEvaluator,
  RuleResult,
  ToolProposal,
  Verdict,
} from './types.js';
