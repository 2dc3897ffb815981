import type { BaseMessage } from '@langchain/core/messages';
import type { MemorySource, MemoryWriteProposal, PolicyDecision } from '../policy/types.js';

/** The tiers stored in the database. Working memory lives in graph state (see `WorkingMemory`). */
export type StoredTier = 'episodic' | 'semantic' | 'procedural';

/** The four tiers: working (thread scratchpad in graph state) plus the three stored tiers. */
export type MemoryTier = 'working' | StoredTier;

/**
 * How far a record's origin is trusted. Defaults by source: `system` and `user` → `high`,
 * `model` and `import` → `medium`, `tool` → `low` (tool output is the memory-poisoning path).
 */
export type TrustLevel = 'high' | 'medium' | 'low';

/** Typed links between records (Zettelkasten style). */
export type LinkType = 'relates_to' | 'supersedes' | 'derived_from';

/** Where a record came from. Every stored record has one. */
export interface Provenance {
  threadId: string;
  runId: string;
  /** Turn of the thread the write came from (0 when unknown). */
  turn: number;
  /** When the information was observed (ISO 8601); decay and time filters use it. */
  timestamp: string;
  source: MemorySource;
  trust: TrustLevel;
  /** The deterministic id of the write that created the record. */
  writeId: string;
}

/** One stored version of a memory record. Versions are immutable; a change is a new version. */
export interface MemoryRecord {
  /** Unique id of this version. */
  id: string;
  tier: StoredTier;
  namespace: readonly string[];
  /**
   * Identity of the record across versions inside its namespace: the procedure name, the
   * store key, `subject|predicate` for facts that have both, else the first version's id.
   */
  key: string;
  /** 1 for the first version; every superseding version adds one. */
  version: number;
  content: string;
  subject?: string;
  predicate?: string;
  object?: string;
  /** 0–1. */
  confidence: number;
  tags: readonly string[];
  /** Structured data (BaseStore items keep their value here; episodic records their participants). */
  value?: Record<string, unknown>;
  provenance: Provenance;
  /** When the record became valid (ISO 8601). */
  validFrom: string;
  /** When it stopped being valid; absent while current. Invalidated records are kept. */
  invalidatedAt?: string;
  /** The record that invalidated this one (conflict winner or newer version). */
  invalidatedBy?: string;
  invalidationReason?: 'conflict' | 'superseded' | 'deleted' | 'revoked';
  /** When the lineage (key) was first created in its current life (ISO 8601). */
  createdAt: string;
  /** When this version was stored (ISO 8601). */
  storedAt: string;
  /** Decay state: S0 of S0·e^(−λt), measured from `reinforcedAt`. Starts at 1. */
  strength: number;
  reinforcedAt: string;
  recallCount: number;
}

/** A link between two records. */
export interface MemoryLink {
  from: string;
  to: string;
  type: LinkType;
  /** Similarity or strength of the link, 0–1. */
  weight: number;
}

/** What a caller asks to remember. Everything but `content` has a default. */
export interface MemoryWriteInput {
  /** Default `semantic`. */
  tier?: StoredTier;
  /** Default: the manager's `namespace`. Labels are non-empty and contain no `.` or `:`. */
  namespace?: readonly string[];
  content: string;
  subject?: string;
  predicate?: string;
  object?: string;
  /** Explicit identity (procedure name, store key). Same key → new version of the record. */
  key?: string;
  /** 0–1. Default 0.7. */
  confidence?: number;
  tags?: readonly string[];
  value?: Record<string, unknown>;
  /** Default `model`. */
  source?: MemorySource;
  /** Default: from `source`. */
  trust?: TrustLevel;
  /** When the information was observed. Default: now. */
  observedAt?: Date;
  /** Records this one was derived from (a `derived_from` link is created to each). */
  derivedFrom?: readonly string[];
  /**
   * Deterministic id of the write. Default: derived from thread, run, turn and the content
   * fields, so a re-run LangGraph node proposes the same write and does not write twice.
   */
  writeId?: string;
}

/** Who is writing: the thread/run/turn the write belongs to. */
export interface MemoryWriteContext {
  threadId?: string;
  runId?: string;
  turn?: number;
  /** The agent proposing the write (policy `proposer`). Default `agent`. */
  proposer?: string;
  /**
   * The conversation the write was made in, as the runtime holds it (graph state, not what
   * the model says). When given, each write's source is derived from it (`deriveProvenance`:
   * is the text the user's, a tool's, or the model's in a turn that saw tool output?) and
   * the declared `source` can only lower that. `propose_memory` and `evolve` always pass it.
   */
  conversation?: readonly BaseMessage[];
}

/** The result of a write proposal. Denied and escalated proposals store nothing. */
export type MemoryWriteOutcome =
  | {
      status: 'written';
      record: MemoryRecord;
      /** Records this write invalidated (conflict losers, previous versions). */
      invalidated: readonly MemoryRecord[];
      links: readonly MemoryLink[];
      proposal: MemoryWriteProposal;
      decision?: PolicyDecision;
      /** True when the write id had already been stored (a replayed node): nothing new happened. */
      replayed: boolean;
    }
  | {
      /** Stored for the record, but invalidated at once: an existing record won the conflict. */
      status: 'rejected_by_conflict';
      record: MemoryRecord;
      winner: MemoryRecord;
      links: readonly MemoryLink[];
      proposal: MemoryWriteProposal;
      decision?: PolicyDecision;
      replayed: boolean;
    }
  | {
      /** The same content is already current: nothing stored, the existing record reinforced. */
      status: 'duplicate';
      record: MemoryRecord;
      proposal: MemoryWriteProposal;
      decision?: PolicyDecision;
      replayed: boolean;
    }
  | {
      status: 'denied';
      code: 'memory_write_denied';
      ruleId: string;
      reason: string;
      proposal: MemoryWriteProposal;
      decision: PolicyDecision;
    }
  | {
      status: 'escalated';
      proposal: MemoryWriteProposal;
      decision: PolicyDecision;
      /** The approval request a human must decide (when the manager has `approvals`). */
      approvalId?: string;
    };

/**
 * Decides which of two conflicting records stays valid. Return `incoming` to invalidate the
 * existing record, `existing` to store the incoming one as already invalidated.
 */
export type ConflictResolver = (
  existing: MemoryRecord,
  incoming: MemoryRecord,
) => 'existing' | 'incoming' | Promise<'existing' | 'incoming'>;

/** How a stored record relates to a similar incoming one. */
export type SimilarityVerdict = 'duplicate' | 'conflict' | 'related' | 'unrelated';

/** Classifies a similar pair (see `detectConflict` for the default). */
export type ConflictDetector = (
  existing: MemoryRecord,
  incoming: MemoryRecord,
  similarity: number,
) => SimilarityVerdict;

/** Options for `MemoryManager.recall`. */
export interface RecallOptions {
  /** Namespace prefix to search under. Default: the manager's namespace. */
  namespace?: readonly string[];
  /** Default: all stored tiers. */
  tiers?: readonly StoredTier[];
  /** Records must carry all of these tags. */
  tags?: readonly string[];
  /** Only records observed at or after / before this time. */
  since?: Date;
  until?: Date;
  /** Validity as of this time (default now): records invalidated before it are excluded. */
  asOf?: Date;
  /** Also return invalidated records (ranked down by {@link RecallOptions.invalidatedWeight}). */
  includeInvalidated?: boolean;
  /** Default 10. */
  limit?: number;
  /** Hits to skip (pagination). Default 0. */
  offset?: number;
  /** Follow links one hop from the hits and append up to this many linked records. Default 3; 0 disables. */
  linked?: number;
  /** Reinforce recalled episodic records (resets their decay clock). Default true. */
  reinforce?: boolean;
  /** Exact-match filters on the record's `value` (BaseStore operators `$eq`, `$gt`, `$in`, …). */
  filter?: Record<string, unknown>;
}

/** One recalled record with the signals that ranked it. */
export interface RecallHit {
  record: MemoryRecord;
  /** Final score: fused rank × decay × confidence (× invalidated weight). Higher is better. */
  score: number;
  /** 1-based rank in the lexical (full-text) candidates, if it was one. */
  lexicalRank?: number;
  /** 1-based rank in the vector candidates, if it was one. */
  vectorRank?: number;
  /** Cosine similarity to the query, when computed. */
  similarity?: number;
  /** The decay factor S0·e^(−λt) applied (1 for tiers without decay). */
  decay: number;
  /** Set when the record was reached by following a link from a hit. */
  via?: { from: string; type: LinkType };
}
