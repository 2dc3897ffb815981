// The root entry re-exports the common core: what most users import to govern a graph.
// Everything else is a subpath export (`@veridex/langgraph/treasury`, `/memory`, `/context`,
// `/sandbox`, `/adapters`, `/testing`, …), and each subpath also re-exports its own core.
export { ApprovalManager, type ApprovalRequest } from './approvals/index.js';
export {
  AuditLog,
  canonicalJson,
  deriveEventId,
  Ed25519Signer,
  Ed25519Verifier,
  type EvidenceBundle,
  generateKeyPair,
  HmacSigner,
  loadOrCreateSigner,
  MemoryAuditStore,
  PostgresAuditStore,
  sealEvidence,
  type TraceEvent,
  type TraceEventType,
  verifyEvidence,
} from './audit/index.js';
export { PostgresCheckpointer, verifyThread } from './checkpointer/index.js';
export { createDatabase, type Database, migrate } from './db/index.js';
export { VeridexError, type VeridexErrorCode } from './errors/index.js';
export { type GovernanceOptions, type RunToolOptions, runTool } from './governance/index.js';
export {
  canonicalIdentity,
  type SignedDecision,
  sameIdentity,
  signDecision,
} from './identity/index.js';
export {
  type ApprovalsInterrupt,
  createGovernedAgent,
  evidenceNode,
  GovernanceAnnotation,
  governedToolNode,
  type ResumeDecision,
  type RunResult,
  resumeThread,
  routeAfterTools,
} from './nodes/index.js';
export { PolicyEngine, policyRule, rules } from './policy/index.js';
export {
  type GovernedTool,
  type SafetyClass,
  SecretsProvider,
  ToolRegistry,
  tool,
} from './tools/index.js';
