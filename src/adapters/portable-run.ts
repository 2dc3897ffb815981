import type { RunnableConfig } from '@langchain/core/runnables';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import type { ApprovalRequest } from '../approvals/index.js';
import type { TraceEvent } from '../audit/index.js';
import type { PortableMessage } from './portable-message.js';

/** Format tag of a portable run. */
export const PORTABLE_RUN_FORMAT = 'veridex.run/v1';

/**
 * An approval request still waiting for decisions, as the `ApprovalManager` stores it but for
 * its creation time (the `approval_requested` audit event keeps that; a target re-derives the
 * request and cannot backdate its row). An importer re-derives it from its own policy: the
 * copy in the file is evidence, not authority.
 */
export type PortableApproval = Omit<ApprovalRequest, 'createdAt'> & { status: 'pending' };

/** A long-term memory write the run made (from its `memory_written` audit event). */
export interface PortableMemoryWrite {
  recordId: string;
  writeId: string;
  tier: 'episodic' | 'semantic' | 'procedural';
  namespace?: string[];
  key: string;
  version: number;
  /** SHA-256 hex of the record's content. */
  contentHash: string;
  status: string;
}

/** A long-term memory record the run invalidated (from its `memory_invalidated` audit event). */
export interface PortableMemoryInvalidation {
  recordId: string;
  key?: string;
  version?: number;
  reason: string;
}

/** What a run changed in memory (seed 000 §8's `memoryDelta`). */
export interface PortableMemoryDelta {
  /** The working-memory channel (scratchpad items), moved out of `state`. */
  working: unknown[];
  written: PortableMemoryWrite[];
  invalidated: PortableMemoryInvalidation[];
}

/** The run's audit chain and its position in it (seed 000 §8's `eventLogIndex`). */
export interface PortableAudit {
  /** Number of events, i.e. the index the next event of the thread gets. */
  eventCount: number;
  /** `hash` of the last event (the genesis hash when there is none). */
  headHash: string;
  events: TraceEvent[];
  /** Reserved for a signed tree head (RFC 9162) of the audit log covering these events. */
  treeHead?: Record<string, unknown>;
}

/**
 * A LangGraph thread in a runtime-neutral form (`veridex.run/v1`, JSON Schema in
 * `schemas/run-v1.schema.json`): the checkpoint a standalone runtime needs to resume it —
 * history, state, what it waits for, memory delta and audit-chain position. It holds only
 * what survives a move: no checkpoint ids or export times, so exporting an imported run gives
 * the same bytes (written with `canonicalJson`).
 */
export interface PortableRun {
  format: typeof PORTABLE_RUN_FORMAT;
  threadId: string;
  messages: PortableMessage[];
  /** Channel values other than the messages and the working memory, as JSON. */
  state: Record<string, unknown>;
  pending: {
    /** Nodes that run when the thread resumes (empty when the run has finished). */
    next: string[];
    /** The node that wrote the exported state; the importer writes it "as" this node. */
    resumeAs?: string;
    /** Approval requests of the thread waiting for decisions, oldest first. */
    approvals: PortableApproval[];
  };
  memory: PortableMemoryDelta;
  audit?: PortableAudit;
}

/** The parts of a compiled LangGraph graph the run converters use. */
export interface ThreadGraph {
  getState(config: RunnableConfig): Promise<{
    values: unknown;
    next: readonly string[];
    config: RunnableConfig;
    /** Tasks of the latest step; a task with interrupts is one the thread is suspended in. */
    tasks?: ReadonlyArray<{ name: string; interrupts?: readonly unknown[] }>;
  }>;
  updateState(
    config: RunnableConfig,
    values: Record<string, unknown>,
    asNode?: string,
  ): Promise<RunnableConfig>;
  /** The compiled graph's checkpointer (read to find which node wrote the latest checkpoint). */
  checkpointer?: BaseCheckpointSaver | boolean;
  /** The compiled graph's nodes (searched for governed tool nodes). */
  nodes?: Record<string, unknown>;
}
