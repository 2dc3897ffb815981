export {
  advanceTiers,
  applyDecision,
  type DecisionAttempt,
  type DecisionRules,
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
