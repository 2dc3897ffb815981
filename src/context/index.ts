// Public surface of the context module: the context compiler and signed hand-off envelopes.
export {
  DEFAULT_SECTION_BUDGETS,
  resolveBudgets,
  type SectionBudgets,
  type SectionTokens,
  sectionTokens,
} from './budgets.js';
export type {
  CompressedHistory,
  HistorySummary,
  TruncationRecord,
} from './compress-history.js';
export {
  type CompiledContext,
  type CompileInput,
  ContextCompiler,
  type ContextCompilerOptions,
  PROCEDURES_HEADING,
  SUMMARY_HEADING,
} from './context-compiler.js';
export type {
  ContextLedger,
  LedgerEntry,
  PruneOptions,
} from './context-ledger.js';
export type { ContextReport } from './context-report.js';
export {
  type CountTokensOptions,
  countTokens,
  DEFAULT_IMAGE_TOKENS,
  MESSAGE_OVERHEAD_TOKENS,
  MessageTokenCounter,
  messageCounterFor,
  NAME_OVERHEAD_TOKENS,
  REPLY_PRIMING_TOKENS,
  roleOf,
  TOOL_CALL_OVERHEAD_TOKENS,
} from './count-tokens.js';
export {
  type ContextEnvelope,
  DEFAULT_ENVELOPE_TTL_MS,
  ENVELOPE_FORMAT,
  type EnvelopeAudience,
  type EnvelopeKey,
  type EnvelopeRejectionReason,
  envelopeSigningInput,
} from './envelope.js';
export { type ExtractiveSummarizerOptions, extractiveSummarizer } from './extractive-summarizer.js';
export { fitText } from './fit-text.js';
export { type GroupedHistory, groupHistory, type HistoryUnit } from './history-units.js';
export {
  DEFAULT_SUMMARY_INSTRUCTIONS,
  type LlmSummarizerOptions,
  llmSummarizer,
} from './llm-summarizer.js';
export { MemoryContextLedger } from './memory-context-ledger.js';
export {
  type BranchResult,
  type MergeConflict,
  type MergeStrategy,
  mergeStrategies,
} from './merge-strategies.js';
export { messageFingerprint } from './message-fingerprint.js';
export {
  contextLimitFor,
  encodingFor,
  KNOWN_CONTEXT_LIMITS,
  knownContextLimit,
  normaliseModelName,
  type TokenEncoding,
} from './model-limits.js';
export {
  type ContextMemory,
  type ExcludedMemory,
  MEMORIES_HEADING,
  type PackedMemories,
  packMemories,
} from './pack-memories.js';
export { PostgresContextLedger } from './postgres-context-ledger.js';
export { PostgresSummaryCache } from './postgres-summary-cache.js';
export { type SealEnvelopeOptions, sealEnvelope } from './seal-envelope.js';
export {
  plainText,
  type SummarizeRequest,
  type Summarizer,
  transcriptLine,
} from './summarizer.js';
export {
  type CachedSummary,
  MemorySummaryCache,
  SUMMARIES_KEPT_PER_THREAD,
  type SummaryCache,
} from './summary-cache.js';
export { type Tokenizer, tokenizerFor } from './tokenizer.js';
export {
  type ContextTool,
  TOOL_DEFINITION_OVERHEAD_TOKENS,
  toolDefinitionTokens,
} from './tool-definition-tokens.js';
export { type ToolTruncation, truncateToolOutput } from './truncate-tool-output.js';
export {
  type EnvelopeVerification,
  type VerifyEnvelopeOptions,
  verifyEnvelope,
} from './verify-envelope.js';
