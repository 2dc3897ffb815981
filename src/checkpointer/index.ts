export type { ListStorageOptions } from './encoded-value.js';
export {
  PostgresCheckpointer,
  type PostgresCheckpointerOptions,
} from './postgres-checkpointer.js';
export { type PruneOptions, type PruneResult, pruneThread } from './prune-thread.js';
export {
  type ThreadVerification,
  type VerificationIssue,
  type VerificationIssueKind,
  type VerifyThreadOptions,
  verifyThread,
} from './verify-thread.js';
