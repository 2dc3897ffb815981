export {
  APPROVALS_INTERRUPT,
  type ApprovalsInterrupt,
  type PendingApproval,
  RECHECK,
  type ResumeDecision,
} from './approval-interrupt.js';
export {
  type ContextNodeOptions,
  type ContextNodeUpdate,
  contextNode,
  type FromState,
} from './context-node.js';
export {
  type EvidenceNodeOptions,
  evidenceNode,
  runIdOf,
  type SealedEvidence,
  sealThreadEvidence,
} from './evidence-node.js';
export {
  GovernedToolNode,
  type GovernedToolNodeOptions,
  governedToolNode,
  VERIDEX_CODE_KEY,
} from './governed-tool-node.js';
export {
  type BranchInput,
  branchResultsReducer,
  type ForkHandoffOptions,
  forkHandoff,
  HandoffAnnotation,
  type HandoffNodeOptions,
  type HandoffRejection,
  handoffNode,
  type JoinHandoffOptions,
  joinHandoff,
} from './handoff-node.js';
export { pendingApprovalInterrupts, type ResumableGraph, resumeThread } from './resume-thread.js';
export { budgetExhausted, routeAfterTools } from './route-after-tools.js';
