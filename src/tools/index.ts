export type {
  ExecuteToolOptions,
  IdempotencyOptions,
  ToolRunFailure,
  ToolRunResult,
  ToolRunSuccess,
} from './execute-tool-types.js';
export { callFingerprint, type IdempotencyKeyParts, idempotencyKeyFor } from './idempotency-key.js';
export type {
  IdempotencyRecord,
  IdempotencyState,
  IdempotencyStore,
  InDoubtResolution,
  ReserveOptions,
  ReserveOutcome,
  StoredFailure,
} from './idempotency-store.js';
export {
  acceptsEveryObject,
  acceptsEverything,
  canonicalJsonSchemaOf,
  type JsonSchema,
  jsonSchemaOf,
  type SchemaSide,
} from './json-schema.js';
export { DEFAULT_LOCK_FILE, LockFilePinStore } from './lock-file-pin-store.js';
export { MemoryIdempotencyStore } from './memory-idempotency-store.js';
export { reviewPinName, type SettleReviewsOptions, settleReviews } from './pin-review.js';
export { MemoryPinStore, type PinStore, type ToolPin } from './pin-store.js';
export { PostgresIdempotencyStore } from './postgres-idempotency-store.js';
export { PostgresPinStore } from './postgres-pin-store.js';
export { isRetryable, RetryableToolError } from './retryable-tool-error.js';
export {
  DEFAULT_MAX_OUTPUT_BYTES,
  type SanitizedOutput,
  type SanitizeOptions,
  type SanitizerFinding,
  sanitizeOutput,
} from './sanitize-output.js';
export { type PinnedFields, pinDocument, schemaHashOf } from './schema-hash.js';
export { ScopedSecretRef } from './secret-ref.js';
export { SecretsProvider } from './secrets-provider.js';
export {
  createGovernedTool,
  isGovernedTool,
  MAX_DESCRIPTION_LENGTH,
  TOOL_NAME_PATTERN,
  tool,
} from './tool.js';
export { assertNoNameClash, toolNameKey } from './tool-name-key.js';
export {
  checkPins,
  reviewHold,
  ToolRegistry,
  type ToolRegistryOptions,
} from './tool-registry.js';
export type {
  AnyGovernedTool,
  ApprovalRoute,
  GovernedTool,
  HttpClient,
  JailedFs,
  SafetyClass,
  SecretRef,
  ToolAnnotations,
  ToolApproval,
  ToolCallContext,
  ToolDefinition,
  ToolExecuteArgs,
  ToolOutputWithArtifact,
  ToolRecoverArgs,
  ToolRecovery,
  ToolRetry,
  ToolReview,
  ToolRuntime,
  ToolSandboxSpec,
  ToolSecrets,
  ToolTrust,
} from './types.js';
export { SAFETY_CLASSES } from './types.js';
