export { advanceTiers, applyDecision, type Transition } from './apply-decision.js';
export {
  ApprovalManager,
  type ApprovalManagerOptions,
  type ApproverPolicy,
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
  PendingFilter,
} from './types.js';
