export { detectConflict, higherConfidenceWins } from './conflicts.js';
export { credentialKindsIn } from './credential-views.js';
export { Decay, type DecayOptions } from './decay.js';
export { type DerivedProvenance, deriveProvenance, leastTrusted } from './derive-provenance.js';
export { GovernedMemoryStore, type GovernedMemoryStoreOptions } from './governed-memory-store.js';
export { heuristicExtractor } from './heuristic-extractor.js';
export { type LlmExtractorOptions, llmExtractor } from './llm-extractor.js';
export { LocalEmbeddings, type LocalEmbeddingsOptions } from './local-embeddings.js';
export type { ExtractionInput, MemoryExtraction, MemoryExtractor } from './memory-extractor.js';
export { DEFAULT_MEMORY_GUARDS, type MemoryGuards } from './memory-guards.js';
export {
  MemoryManager,
  type MemoryManagerOptions,
  type ProposeManyOptions,
} from './memory-manager.js';
export { memoryRules } from './memory-rules.js';
export { type ProposeMemoryToolOptions, proposeMemoryTool } from './propose-memory-tool.js';
export type { HybridSearchOptions } from './recall.js';
export type { FullTextOptions } from './term-statistics.js';
export type {
  ConflictDetector,
  ConflictResolver,
  LinkType,
  MemoryLink,
  MemoryRecord,
  MemoryTier,
  MemoryWriteContext,
  MemoryWriteInput,
  MemoryWriteOutcome,
  Provenance,
  RecallHit,
  RecallOptions,
  SimilarityVerdict,
  StoredTier,
  TrustLevel,
} from './types.js';
export type { InvertedFileOptions } from './vector-index.js';
export type { VectorMode, VectorPreference, VectorSetup } from './vector-setup.js';
export {
  RESET_WORKING_MEMORY,
  type WorkingMemoryItem,
  type WorkingMemoryUpdate,
  workingMemoryReducer,
} from './working-memory.js';
