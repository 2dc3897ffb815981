import type { EmbeddingsInterface } from '@langchain/core/embeddings';
import type { ApprovalManager } from '../approvals/index.js';
import { type AuditLog, deriveEventId } from '../audit/index.js';
import { createDatabase, type Database, migrate } from '../db/index.js';
import { VeridexError } from '../errors/index.js';
import type { ProposalEvaluator } from '../policy/index.js';
import { detectConflict, higherConfidenceWins } from './conflicts.js';
import { Decay, type DecayOptions } from './decay.js';
import { deriveProvenance, leastTrusted } from './derive-provenance.js';
import { followLinks } from './follow-links.js';
import { LocalEmbeddings } from './local-embeddings.js';
import {
  DEFAULT_MEMORY_GUARDS,
  guardedPolicy,
  type MemoryGuards,
  weakenedGuards,
} from './memory-guards.js';
import { type HybridSearchOptions, hybridSearch } from './recall.js';
import {
  currentProcedures,
  historyOf,
  linksOf,
  recordsById,
  reinforceHits,
} from './record-queries.js';
import { type RecordRow, rowToRecord } from './record-row.js';
import { runWrites } from './run-writes.js';
import { INVALIDATE_KEY } from './sql.js';
import type {
  ConflictDetector,
  ConflictResolver,
  MemoryLink,
  MemoryRecord,
  MemoryWriteContext,
  MemoryWriteInput,
  MemoryWriteOutcome,
  RecallHit,
  RecallOptions,
} from './types.js';
import { type InvertedFileOptions, VectorIndex } from './vector-index.js';
import { setupVectors, type VectorPreference, type VectorSetup } from './vector-setup.js';
import { assertNamespace, buildWriteDraft, TRUST_BY_SOURCE } from './write-draft.js';

/** Options for {@link MemoryManager}. */
export interface MemoryManagerOptions {
  /** Where memory lives. Default: PGlite in `./.veridex/db`, with pgvector loaded. */
  db?: Database;
  /** Any `@langchain/core` embeddings. Default: the offline, lexical-grade {@link LocalEmbeddings}. */
  embeddings?: EmbeddingsInterface;
  /**
   * Decides every write before it is stored (a `PolicyEngine`, usually with `memoryRules`).
   * The {@link MemoryManagerOptions.guards} run first, whatever it holds.
   */
  policy: ProposalEvaluator;
  /**
   * Built-in protections applied before `policy`: credential-shaped text is denied and
   * tool-sourced writes are escalated to a human. Default {@link DEFAULT_MEMORY_GUARDS}.
   * Switching one off (`{ secrets: 'allow' }`, `{ toolSourcedWrites: 'allow' }`) is the
   * explicit opt-out; every write it lets through says so in its `memory_written` event.
   */
  guards?: Partial<MemoryGuards>;
  /** Receives `memory_written`, `memory_invalidated` and `security_event` events. */
  audit?: AuditLog;
  /**
   * Where escalated writes wait for a human (they show up in `veridex approvals list`). The
   * same write proposed again once approved — same write id, e.g. a re-run node or a retried
   * call — is stored; rejected or expired ones are denied. Without it, escalated writes are
   * reported and not stored.
   */
  approvals?: ApprovalManager;
  /** Default namespace of writes and recalls. Default `['default']`. */
  namespace?: readonly string[];
  /** `auto` (default) uses pgvector when available, else stored float arrays and sketches. */
  vectors?: VectorPreference;
  /** Inverted-file index for large tables; `false` keeps vector search exact. */
  invertedFile?: InvertedFileOptions | false;
  decay?: DecayOptions;
  /** Decides conflicts. Default {@link higherConfidenceWins}. */
  resolver?: ConflictResolver;
  /** Classifies similar pairs. Default {@link detectConflict}. */
  detector?: ConflictDetector;
  /** Similarity from which a stored record is checked for a conflict with a new one. Default 0.7. */
  conflictThreshold?: number;
  /** Similarity from which records are linked `relates_to`. Default 0.8. */
  linkThreshold?: number;
  /** Confidence of writes that give none. Default 0.7. */
  defaultConfidence?: number;
  /** Proposer named in proposals when the context gives none. Default `agent`. */
  proposer?: string;
  search?: HybridSearchOptions;
  now?: () => Date;
}

/** Options for {@link MemoryManager.proposeMany}. */
export interface ProposeManyOptions {
  /** Compare each write with similar stored records (conflicts, links). Default true. */
  similarity?: boolean;
  /** Same key → new version without a conflict decision (BaseStore puts). Default: procedures only. */
  replaces?: boolean;
}

interface Ready {
  db: Database;
  index: VectorIndex;
}

/**
 * Four-tier memory over the project's database. Working memory is the thread's scratchpad in
 * graph state (see `memoryNodes`); the episodic, semantic and procedural tiers are stored
 * here, every version kept with its provenance. Every write — from the model (the
 * `propose_memory` tool), a node or this API — is a `memory_write` proposal the policy
 * evaluates first; conflicts are resolved by a pluggable resolver and the loser invalidated,
 * never deleted. Recall is hybrid (full text + vectors, reciprocal-rank fusion) with decay.
 *
 * @example
 * const memory = new MemoryManager({ db, policy: new PolicyEngine({ rules: [memoryRules.denySecrets()] }) });
 * await memory.write({ content: 'Alice prefers dark mode', subject: 'alice', predicate: 'prefers theme', object: 'dark' });
 * const hits = await memory.recall('which theme does alice like?');
 */
export class MemoryManager {
  readonly embeddings: EmbeddingsInterface;
  readonly namespace: readonly string[];
  readonly decay: Decay;
  readonly #options: MemoryManagerOptions;
  readonly #now: () => Date;
  /** The guards in force (defaults filled in). */
  readonly guards: Readonly<MemoryGuards>;
  readonly #policy: ProposalEvaluator;
  #ready: Promise<Ready> | undefined;
  #ownsDatabase = false;

  constructor(options: MemoryManagerOptions) {
    if (!options.policy || typeof options.policy.evaluate !== 'function') {
      throw new VeridexError(
        'config_invalid',
        'MemoryManager needs a policy (e.g. new PolicyEngine({ rules: [memoryRules.denySecrets()] })): every memory write is a proposal.',
      );
    }
    this.#options = options;
    this.embeddings = options.embeddings ?? new LocalEmbeddings();
    this.namespace = [...(options.namespace ?? ['default'])];
    assertNamespace(this.namespace);
    this.decay = new Decay(options.decay);
    this.#now = options.now ?? (() => new Date());
    this.guards = Object.freeze({ ...DEFAULT_MEMORY_GUARDS, ...options.guards });
    this.#policy = guardedPolicy(options.policy, this.guards);
  }

  /**
   * Migrates the schema and runs the conditional vector setup (pgvector or the fallback).
   * Every method calls it; call it yourself to fail fast at start-up.
   */
  async setup(): Promise<VectorSetup> {
    return (await this.#prepare()).index.setup;
  }

  /** The database in use (after {@link setup}). */
  async database(): Promise<Database> {
    return (await this.#prepare()).db;
  }

  /**
   * Proposes one write: policy first, then conflict resolution and storage. Never throws for
   * a denial: the outcome says `denied` (code `memory_write_denied`) or `escalated`.
   * @throws VeridexError `input_invalid` for a malformed input.
   */
  async propose(
    input: MemoryWriteInput,
    context: MemoryWriteContext = {},
  ): Promise<MemoryWriteOutcome> {
    const [outcome] = await this.proposeMany([input], context);
    return outcome!;
  }

  /**
   * Like {@link propose}, but a denied write throws.
   * @throws VeridexError `memory_write_denied` naming the rule (`details.ruleId`).
   */
  async write(
    input: MemoryWriteInput,
    context: MemoryWriteContext = {},
  ): Promise<MemoryWriteOutcome> {
    const outcome = await this.propose(input, context);
    if (outcome.status === 'denied') {
      throw new VeridexError(
        'memory_write_denied',
        `Memory write denied by rule "${outcome.ruleId}": ${outcome.reason}.`,
        { details: { ruleId: outcome.ruleId, writeId: outcome.proposal.writeId } },
      );
    }
    return outcome;
  }

  /**
   * Proposes a batch: each write is evaluated by the policy in order, the accepted ones are
   * embedded in one call and stored in one transaction. Outcomes are in input order.
   */
  async proposeMany(
    inputs: readonly MemoryWriteInput[],
    context: MemoryWriteContext = {},
    options: ProposeManyOptions = {},
  ): Promise<MemoryWriteOutcome[]> {
    const { db, index } = await this.#prepare();
    const now = this.#now();
    const drafts = inputs.map((input) =>
      buildWriteDraft(
        withDerivedSource(input, context),
        context,
        {
          namespace: this.namespace,
          confidence: this.#options.defaultConfidence ?? 0.7,
          proposer: this.#options.proposer ?? 'agent',
          now,
        },
        options.replaces === undefined ? {} : { replaces: options.replaces },
      ),
    );
    return runWrites(drafts, {
      db,
      index,
      embeddings: this.embeddings,
      policy: this.#policy,
      weakenedGuards: weakenedGuards(this.guards),
      audit: this.#options.audit,
      approvals: this.#options.approvals,
      plan: {
        index,
        resolver: this.#options.resolver ?? higherConfidenceWins,
        detector: this.#options.detector ?? detectConflict,
        decay: this.decay,
        conflictThreshold: this.#options.conflictThreshold ?? 0.7,
        linkThreshold: this.#options.linkThreshold ?? 0.8,
        similarity: options.similarity ?? true,
        now,
      },
    });
  }

  /**
   * Hybrid recall (full text + vectors, fused by rank), with decay, confidence and validity
   * applied, plus up to `linked` records one link away. Recalled episodic records are reinforced.
   */
  async recall(text: string, options: RecallOptions = {}): Promise<RecallHit[]> {
    const { db, index } = await this.#prepare();
    // PostgreSQL text cannot hold NUL; a query is only searched for, so it is dropped.
    const query = text.replaceAll('\u0000', ' ');
    const now = this.#now();
    const namespace = options.namespace ?? this.namespace;
    if (namespace.length > 0) assertNamespace(namespace);
    const filter = {
      namespacePath: namespace.join('.'),
      ...(options.tiers ? { tiers: options.tiers } : {}),
      ...(options.tags ? { tags: options.tags } : {}),
      ...(options.since ? { since: options.since } : {}),
      ...(options.until ? { until: options.until } : {}),
      ...(options.asOf ? { asOf: options.asOf } : {}),
      ...(options.includeInvalidated ? { includeInvalidated: true } : {}),
      ...(options.filter ? { value: options.filter } : {}),
    };
    await index.refresh();
    const hits = await hybridSearch({
      db,
      index,
      decay: this.decay,
      query,
      queryVector: await this.embeddings.embedQuery(query),
      filter,
      limit: options.limit ?? 10,
      offset: options.offset ?? 0,
      now,
      options: this.#options.search ?? {},
    });
    const linked = await followLinks(db, hits, filter, options.linked ?? 3, {
      decay: this.decay,
      now,
    });
    if (options.reinforce ?? true) await reinforceHits(db, hits, this.decay, now);
    return [...hits, ...linked];
  }

  /** A record version by id. */
  async get(id: string): Promise<MemoryRecord | undefined> {
    const { db } = await this.#prepare();
    return (await recordsById(db, [id]))[0];
  }

  /**
   * Every version of the record `id` belongs to (same key), oldest first, plus records it
   * superseded or was superseded by under another key. Invalidated versions are included.
   */
  async history(id: string): Promise<MemoryRecord[]> {
    const { db } = await this.#prepare();
    const record = await this.get(id);
    return record ? historyOf(db, record) : [];
  }

  /**
   * Invalidates the current version of `key` in `namespace` (nothing is deleted: history
   * keeps it) and writes a `memory_invalidated` event. Returns the invalidated record. Not a
   * policy proposal: it stores nothing new (a `memory_write` proposal has no delete form).
   */
  async forget(
    namespace: readonly string[],
    key: string,
    context: MemoryWriteContext = {},
    reason: 'deleted' | 'revoked' = 'revoked',
  ): Promise<MemoryRecord | undefined> {
    assertNamespace(namespace);
    const { db } = await this.#prepare();
    const now = this.#now();
    const { rows } = await db.query<RecordRow>(INVALIDATE_KEY, [
      namespace.join('.'),
      key,
      now,
      reason,
    ]);
    const record = rows[0] ? rowToRecord(rows[0]) : undefined;
    if (record && this.#options.audit) {
      const threadId = context.threadId ?? 'default';
      await this.#options.audit.append({
        threadId,
        runId: context.runId ?? threadId,
        turnIndex: context.turn ?? 0,
        eventId: deriveEventId(threadId, 'memory_invalidated', record.id, reason),
        type: 'memory_invalidated',
        payload: { recordId: record.id, key: record.key, version: record.version, reason },
      });
    }
    return record;
  }

  /** Links from or to the given records. */
  async links(ids: readonly string[]): Promise<MemoryLink[]> {
    return linksOf((await this.#prepare()).db, ids);
  }

  /**
   * Stores a new version of a procedure (instruction, policy or tool-use workflow) named
   * `name`; the previous version is invalidated as superseded. Goes through the policy.
   */
  setProcedure(
    name: string,
    content: string,
    options: Omit<MemoryWriteInput, 'content' | 'key' | 'tier'> = {},
    context: MemoryWriteContext = {},
  ): Promise<MemoryWriteOutcome> {
    return this.write(
      { source: 'system', confidence: 1, ...options, tier: 'procedural', key: name, content },
      context,
    );
  }

  /** Current procedures under `namespace` (default: the manager's), ordered by name. */
  async procedures(namespace: readonly string[] = this.namespace): Promise<MemoryRecord[]> {
    return currentProcedures((await this.#prepare()).db, namespace);
  }

  /**
   * The current procedures' texts, ready for the context compiler's system section:
   * `compiler.compile({ procedural: await memory.proceduralFor(), ... })`.
   */
  async proceduralFor(namespace: readonly string[] = this.namespace): Promise<string[]> {
    return (await this.procedures(namespace)).map((record) => record.content);
  }

  /** Re-trains the inverted-file centroids and re-files every record (after large growth). */
  async reindex(): Promise<void> {
    await (await this.#prepare()).index.train();
  }

  /** Closes the database if the manager opened it. */
  async close(): Promise<void> {
    if (this.#ownsDatabase && this.#ready) await (await this.#ready).db.close();
  }

  /** Runs `fn` with the ready database and index (for the BaseStore adapter). */
  async withStorage<T>(fn: (db: Database, index: VectorIndex) => Promise<T>): Promise<T> {
    const { db, index } = await this.#prepare();
    return fn(db, index);
  }

  #prepare(): Promise<Ready> {
    this.#ready ??= (async () => {
      let db = this.#options.db;
      if (!db) {
        const { vector } = await import('@electric-sql/pglite-pgvector');
        db = await createDatabase({ extensions: { vector } });
        this.#ownsDatabase = true;
      }
      await migrate(db);
      const dimensions = await embeddingDimensions(this.embeddings);
      const setup = await setupVectors(db, dimensions, this.#options.vectors ?? 'auto');
      const index = new VectorIndex(db, setup, this.#options.invertedFile ?? {});
      await index.refresh(true);
      return { db, index };
    })();
    // A failed setup (database down) may succeed on the next call.
    this.#ready.catch(() => {
      this.#ready = undefined;
    });
    return this.#ready;
  }
}

const TRUST_RANK = { high: 2, medium: 1, low: 0 } as const;

/**
 * The input with its source derived from the conversation, when the context carries one:
 * the declared source may lower it, never raise it, and so may the declared trust.
 */
function withDerivedSource(input: MemoryWriteInput, context: MemoryWriteContext): MemoryWriteInput {
  if (!context.conversation) return input;
  const texts = [input.content, input.object].filter(
    (text): text is string => typeof text === 'string',
  );
  const derived = deriveProvenance(texts, context.conversation);
  const source = leastTrusted(input.source ?? 'model', derived.source);
  const sourceTrust = TRUST_BY_SOURCE[source];
  const trust =
    input.trust !== undefined && TRUST_RANK[input.trust] < TRUST_RANK[sourceTrust]
      ? input.trust
      : sourceTrust;
  return { ...input, source, trust };
}

async function embeddingDimensions(embeddings: EmbeddingsInterface): Promise<number> {
  const declared = (embeddings as { dimensions?: unknown }).dimensions;
  if (typeof declared === 'number' && Number.isInteger(declared) && declared > 0) return declared;
  const probe = await embeddings.embedQuery('dimensions');
  if (!Array.isArray(probe) || probe.length === 0) {
    throw new VeridexError(
      'config_invalid',
      'The embeddings returned an empty vector; expected a fixed-length number array.',
    );
  }
  return probe.length;
}
