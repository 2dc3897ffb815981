export type {
  HandoffProposal,
  MemorySource,
  MemoryWriteProposal,
  PolicyDecision,
  Proposal,
  ProposalEvaluator,
  RuleResult,
  ToolProposal,
  Verdict,
} from './types.js';
