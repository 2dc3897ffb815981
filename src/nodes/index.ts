export {
  type AgentModelNodeOptions,
  agentModelNode,
  type InvokableModel,
} from './agent-model-node.js';
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
  createGovernedAgent,
  type GovernedAgent,
  type GovernedAgentOptions,
  type GovernedAgentPlugin,
  type RunResult,
} from './create-governed-agent.js';
export {
  type EvidenceNodeOptions,
  evidenceNode,
  runIdOf,
  type SealedEvidence,
  sealThreadEvidence,
} from './evidence-node.js';
export { GovernanceAnnotation, type GovernanceState } from './governance-annotation.js';
export {
  GovernedToolNode,
  type GovernedToolNodeOptions,
  type GovernedToolNodeOutput,
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
export {
  MemoryAnnotation,
  type MemoryNodesOptions,
  type MemoryNodesState,
  type MemoryWriteSummary,
  memoryNodes,
  type RetrievedMemory,
} from './memory-nodes.js';
export { pendingApprovalInterrupts, type ResumableGraph, resumeThread } from './resume-thread.js';
export { budgetExhausted, routeAfterTools } from './route-after-tools.js';
export {
  BudgetExhaustedError,
  type RunBudget,
  runSignal,
  tokensUsedThisRun,
} from './run-budget.js';
