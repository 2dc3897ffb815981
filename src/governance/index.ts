export {
  APPROVALS_INTERRUPT,
  type ApprovalsInterrupt,
  applyResume,
  approvalIdOf,
  approvalsInterrupt,
  type PendingApproval,
  RECHECK,
  type ResumeContext,
  type ResumeDecision,
} from './approval-interrupt.js';
export {
  type AllowedPlan,
  type CallPlan,
  type FailedPlan,
  type PendingPlan,
  type PlanContext,
  planCall,
  refreshPlan,
} from './call-planner.js';
export { canSuspend } from './can-suspend.js';
export {
  type DecideOptions,
  decideCalls,
  executePlan,
  failureOf,
} from './decide-calls.js';
export type { CallScope, GovernanceRuntime } from './governance-runtime.js';
export {
  fromHitlResponse,
  type HitlActionRequest,
  type HitlRequest,
  type HitlReviewConfig,
  hitlRequestOf,
  isHitlResponse,
} from './hitl-protocol.js';
export { type GovernanceOptions, resolveRuntime } from './resolve-runtime.js';
export type {
  ReviewConfigs,
  ReviewDecision,
  ReviewFacts,
  ToolReview,
} from './review-config.js';
export { type RunToolOptions, runTool } from './run-tool.js';
export {
  GOVERNANCE_EVENT,
  type GovernanceEventSink,
  type GovernanceStreamEvent,
} from './stream-events.js';
