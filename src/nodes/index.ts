export {
  APPROVALS_INTERRUPT,
  type ApprovalsInterrupt,
  type PendingApproval,
  RECHECK,
  type ResumeDecision,
} from '../governance/approval-interrupt.js';
export {
  type AgentModelNodeOptions,
  agentModelNode,
  type InvokableModel,
} from './agent-model-node.js';
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
export { evidenceFileName } from './evidence-file-name.js';
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
  type GovernedToolNodeExtraOptions,
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
export type { LangChainToolLike, NodeTool, ToolClassification } from './node-tools.js';
export {
  isThreadFinished,
  pendingApprovalInterrupts,
  type ResumableGraph,
  resumeThread,
} from './resume-thread.js';
export {
  type ResumeOutcome,
  type Resumer,
  type ResumerOptions,
  startResumer,
} from './resumer.js';
export { budgetExhausted, routeAfterTools } from './route-after-tools.js';
export {
  BudgetExhaustedError,
  type RunBudget,
  runSignal,
  tokensUsedThisRun,
} from './run-budget.js';
export type { HandleToolErrors } from './tool-errors.js';
