export {
  advanceTiers,
  applyDecision,
  type DecisionAttempt,
  type DecisionRules,
  mayDecideAt,
  type Transition,
} from './apply-decision.js';
export {
  ApprovalManager,
  type ApprovalManagerOptions,
  type ApproverPolicy,
  claimedApprover,
  type RequestOptions,
  requiredApprovals,
} from './approval-manager.js';
export type { ApprovalStore } from './approval-store.js';
export { MemoryApprovalStore } from './memory-approval-store.js';
export { PostgresApprovalStore } from './postgres-approval-store.js';
export {
  type ApprovalExpectation,
  type ApprovalProof,
  proveEdit,
  proveQuorum,
} from './prove-approval.js';
export type { ShownProposal } from './shown-proposal.js';
export type {
  ApprovalDecisionKind,
  ApprovalDecisionRecord,
  ApprovalPack,
  ApprovalRequest,
  ApprovalStatus,
  ApprovalTier,
  DecisionInput,
  DecisionRefusal,
  IdentityMode,
  PendingFilter,
  SignedDecisionRecord,
  UnverifiedDecision,
} from './types.js';
