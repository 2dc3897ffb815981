export { PolicyEngine, type PolicyEngineOptions } from './policy-engine.js';
export { policyRule } from './policy-rule.js';
export {
  buildHandoffProposal,
  buildMemoryWriteProposal,
  buildToolProposal,
  type ToolProposalEnvelope,
  toolProposalEnvelope,
} from './proposals.js';
export {
  type ArgumentThresholdOptions,
  type CallLimitOptions,
  compareDecimal,
  type RateLimitOptions,
  type RequireApprovalOptions,
  rules,
  type ToolCost,
  type ToolListOptions,
} from './rules/index.js';
export { policyPack } from './rules/policy-pack.js';
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
export {
  MemoryUsageStore,
  PostgresUsageStore,
  type UsageRequest,
  type UsageResult,
  type UsageStore,
} from './usage-store.js';
