import type { RunnableConfig } from '@langchain/core/runnables';
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type DeltaChannelHistory,
  type PendingWrite,
  type SerializerProtocol,
} from '@langchain/langgraph-checkpoint';
import { type Database, migrate } from '../db/index.js';
import { VeridexError } from '../errors/index.js';
import { openDatabaseFromUrl, readAddress, requireThreadId } from './checkpoint-config.js';
import { readDeltaChannelHistory } from './delta-channel-history.js';
import { DEFAULT_LIST_STORAGE, type ListStorageOptions } from './encoded-value.js';
import { callStored, installFunctions } from './install-functions.js';
import { pageFetcher } from './list-pages.js';
import { migratePendingSends } from './pending-sends.js';
import { type PruneOptions, type PruneResult, pruneThread } from './prune-thread.js';
import { type EncodingContext, type PutInput, type PutPlan, planPut } from './put-plan.js';
import { draftToTuple, type ReadRow, rowsToDrafts, rowsToTuples } from './read-tuples.js';
import { SequenceCache } from './sequence-cache.js';
import {
  DELETE_THREAD,
  GET_CHECKPOINT,
  KIND_TOKEN,
  LOCK_THREAD_EXCLUSIVE,
  PUT_CHECKPOINT,
  PUT_WRITES,
  SEQUENCE_ITEMS_KEY,
  SEQUENCE_PREFIX_MISSING,
} from './sql.js';
import { TupleCache } from './tuple-cache.js';
import {
  type ThreadVerification,
  type VerifyThreadOptions,
  verifyThread,
} from './verify-thread.js';
import { WriteBatcher } from './write-batcher.js';
import { planWrites, type WritesPlan, writesParams } from './writes-plan.js';

const DEFAULT_TUPLE_CACHE_BYTES = 64 * 1024 * 1024;

/** Options for {@link PostgresCheckpointer}. */
export interface PostgresCheckpointerOptions {
  /** The database (PostgreSQL or PGlite) from `createDatabase()`, or a promise of one. */
  db: Database | Promise<Database>;
  /** Serialiser for values; default LangGraph's `JsonPlusSerializer`, as every saver uses. */
  serde?: SerializerProtocol;
  /**
   * When JSON lists (e.g. `messages`) are stored element by element, each element once per
   * thread; `false` stores every value whole like the official saver. Defaults
   * `{ minBytes: 256, minElementBytes: 48 }`.
   */
  listStorage?: Partial<ListStorageOptions> | false;
  /** How many (thread, channel) lists this process remembers for appending. Default 1,000. */
  sequenceCacheSize?: number;
  /**
   * Bytes of serialised checkpoints this process keeps (the last one stored or read per
   * thread and namespace) so that `getTuple` of an unchanged checkpoint only has the
   * database confirm it instead of sending it again. The database checks every time, in the
   * same statement, so other writers never make it stale. Default 64 MiB; 0 turns it off.
   */
  tupleCacheBytes?: number;
  /** Checkpoints fetched per query while `list()` iterates. Default 100. */
  listPageSize?: number;
  /**
   * Whether `put` and `putWrites` wait for PostgreSQL to flush their commit to disk. Default
   * `true`, as with the official saver. `false` commits asynchronously (PostgreSQL's
   * `synchronous_commit = off`, for these statements only): each write saves the flush,
   * about 0.15 ms here, and if the *database server* crashes, the checkpoints of roughly
   * the last 0.6 s (three `wal_writer_delay`s) can be lost — never corrupted, never
   * reordered, and never one committed before a later synchronous commit (the WAL is
   * flushed in order). A thread then resumes from an earlier checkpoint and re-runs the
   * steps after it, so use it when re-running a step is safe: tools run through
   * `governedToolNode`/`runTool` in a graph invoked with `durability: 'sync'` are, since their
   * idempotency ledger commits synchronously before a tool acts, flushing every checkpoint
   * written before it. A crash of your process loses nothing either way.
   */
  synchronousCommit?: boolean;
  /** Close the database in {@link PostgresCheckpointer.close}. Default false (true for `fromUrl`). */
  ownsDatabase?: boolean;
}

/**
 * A LangGraph checkpointer on PostgreSQL or embedded PGlite: a drop-in for the official
 * `PostgresSaver` that stores each call in one statement, keeps growing lists (messages)
 * as append-only sequences of content-addressed elements, and chains every checkpoint to
 * its parent by hash so {@link verifyThread} can prove a thread was not edited.
 *
 * @example
 * const checkpointer = PostgresCheckpointer.fromUrl(process.env.DATABASE_URL ?? 'memory://');
 * await checkpointer.setup();
 * const graph = builder.compile({ checkpointer });
 */
export class PostgresCheckpointer extends BaseCheckpointSaver {
  readonly #database: Promise<Database>;
  readonly #owned: boolean;
  readonly #sequences: SequenceCache;
  readonly #listStorage: ListStorageOptions | false;
  readonly #pageSize: number;
  readonly #synchronousCommit: boolean;
  readonly #tuples: TupleCache;
  readonly #inFlight = new Set<Promise<unknown>>();
  readonly #writes = new WriteBatcher((threadId, plans) => this.#storeWrites(threadId, plans));
  #ready: Promise<Database> | undefined;

  constructor(options: PostgresCheckpointerOptions) {
    super(options.serde);
    this.#database = Promise.resolve(options.db);
    // Without a handler, a rejected lazy database would be reported as unhandled before use.
    this.#database.catch(() => undefined);
    this.#owned = options.ownsDatabase ?? false;
    this.#sequences = new SequenceCache(options.sequenceCacheSize ?? 1000);
    this.#listStorage =
      options.listStorage === false ? false : { ...DEFAULT_LIST_STORAGE, ...options.listStorage };
    this.#pageSize = options.listPageSize ?? 100;
    this.#synchronousCommit = options.synchronousCommit ?? true;
    this.#tuples = new TupleCache(options.tupleCacheBytes ?? DEFAULT_TUPLE_CACHE_BYTES);
  }

  /**
   * A checkpointer over a database it opens and owns: `postgres://…` for PostgreSQL,
   * `memory://` or `file://<dir>` for PGlite. Same shape as `PostgresSaver.fromConnString`.
   *
   * @example const checkpointer = PostgresCheckpointer.fromUrl('memory://');
   */
  static fromUrl(
    url: string,
    options: Omit<PostgresCheckpointerOptions, 'db' | 'ownsDatabase'> & { schema?: string } = {},
  ): PostgresCheckpointer {
    const { schema, ...rest } = options;
    return new PostgresCheckpointer({
      ...rest,
      db: openDatabaseFromUrl(url, schema),
      ownsDatabase: true,
    });
  }

  /** Alias of {@link PostgresCheckpointer.fromUrl}, named like the official saver's factory. */
  static fromConnString(
    url: string,
    options: Omit<PostgresCheckpointerOptions, 'db' | 'ownsDatabase'> & { schema?: string } = {},
  ): PostgresCheckpointer {
    return PostgresCheckpointer.fromUrl(url, options);
  }

  /** A checkpointer over a database you opened (and close yourself). */
  static fromDatabase(
    db: Database,
    options: Omit<PostgresCheckpointerOptions, 'db'> = {},
  ): PostgresCheckpointer {
    return new PostgresCheckpointer({ ...options, db });
  }

  /**
   * Creates or upgrades the tables (`migrate(db)`): safe to call repeatedly and from several
   * processes at once. Every method also runs it on first use.
   */
  async setup(): Promise<void> {
    await this.database();
  }

  /** The migrated database handle (for maintenance queries and tests). */
  database(): Promise<Database> {
    this.#ready ??= this.#database.then(async (db) => {
      await migrate(db);
      await installFunctions(db);
      return db;
    });
    // A failed setup is retried on the next call instead of being cached forever.
    this.#ready.catch(() => {
      this.#ready = undefined;
    });
    return this.#ready;
  }

  /**
   * The checkpoint `config` names (or the thread's latest in its namespace) with its values
   * and pending writes, in one statement; `undefined` when there is none. When this process
   * stored or read that checkpoint last, the statement only confirms it is unchanged.
   *
   * @throws VeridexError `checkpoint_invalid` when stored rows it needs were removed outside the checkpointer.
   */
  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const { threadId, checkpointNs, checkpointId } = readAddress(config);
    if (threadId === undefined || threadId === null) return undefined;
    const thread = String(threadId);
    const db = await this.database();
    const cached = this.#tuples.get(thread, checkpointNs);
    const known =
      cached && (!checkpointId || cached.token.checkpointId === checkpointId) ? cached : undefined;
    const { rows } = await callStored<ReadRow>(db, GET_CHECKPOINT, [
      thread,
      checkpointNs,
      checkpointId ?? '',
      known?.token.checkpointId ?? null,
      known?.token.hash ?? null,
      known?.token.writesDigest ?? null,
    ]);
    const token = rows[0];
    if (token?.kind !== KIND_TOKEN) return undefined;
    let draft = known?.draft;
    if (token.idx !== 1 || !draft) {
      draft = rowsToDrafts(rows)[0];
      if (!draft) return undefined;
      this.#tuples.afterRead(draft, {
        checkpointId: token.checkpoint_id!,
        hash: token.blob!,
        writesDigest: Buffer.from(token.text1!, 'hex'),
      });
    }
    const tuple = await draftToTuple(draft, this.serde, true);
    await migratePendingSends([tuple], db, this.serde, () => this.getNextVersion(undefined));
    return tuple;
  }

  /**
   * Checkpoints newest first, filtered by `config` (thread, namespace, id) and by `limit`,
   * `before` and a metadata `filter` (JSON containment); one statement per page of
   * `listPageSize`, each list's elements sent once per page.
   */
  async *list(
    config: RunnableConfig,
    options: CheckpointListOptions = {},
  ): AsyncGenerator<CheckpointTuple> {
    const db = await this.database();
    const fetchPage = pageFetcher(config, options);
    let remaining = options.limit ?? Number.POSITIVE_INFINITY;
    let cursor: CheckpointTuple | undefined;
    while (remaining > 0) {
      const pageSize = Math.min(remaining, this.#pageSize);
      const { sql, params, prepareAs } = fetchPage(pageSize, cursor?.config.configurable);
      const { rows } = await db.query<ReadRow>(sql, params, { prepareAs });
      const tuples = await rowsToTuples(rows, this.serde);
      await migratePendingSends(tuples, db, this.serde, () => this.getNextVersion(undefined));
      for (const tuple of tuples) yield tuple;
      if (tuples.length < pageSize) return;
      remaining -= tuples.length;
      cursor = tuples[tuples.length - 1];
    }
  }

  /**
   * Stores a checkpoint and the values of the channels in `newVersions`, in one statement;
   * other channels keep their parent's value. A growing list only sends its new elements.
   *
   * @throws VeridexError `config_invalid` without `configurable.thread_id`; `db_unavailable`
   *   when the connection fails (nothing is half-written: the statement is atomic).
   */
  put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    return this.#track(this.#put(config, checkpoint, metadata, newVersions));
  }

  async #put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const threadId = requireThreadId(config, 'put');
    const { checkpointNs, checkpointId: parentId } = readAddress(config);
    const input: PutInput = {
      threadId,
      checkpointNs,
      parentCheckpointId: parentId || undefined,
      checkpoint,
      metadata,
      newVersions,
    };
    const db = await this.database();
    const store = (plan: PutPlan) =>
      callStored(db, PUT_CHECKPOINT, [...plan.params, this.#synchronousCommit]);
    let plan = await planPut(input, this.#encoding(this.#sequences));
    try {
      await store(plan);
    } catch (error) {
      if (!isSequenceConflict(error)) throw error;
      // Another writer appended to, or prune() trimmed, a list this process was extending:
      // forget what we knew and store the lists as fresh sequences.
      for (const [key] of plan.remember) this.#sequences.forget(key);
      plan = await planPut(input, this.#encoding(undefined));
      await store(plan);
    }
    for (const [key, known] of plan.remember) this.#sequences.remember(key, known);
    this.#tuples.afterPut(input, plan.stored);
    return {
      configurable: {
        thread_id: config.configurable!.thread_id,
        checkpoint_ns: checkpointNs,
        checkpoint_id: checkpoint.id,
      },
    };
  }

  /**
   * Stores a task's pending writes (one statement; calls for one thread that arrive while
   * the previous one runs share the next statement). Resolves once they are committed.
   *
   * @throws VeridexError `config_invalid` without `thread_id` or `checkpoint_id`.
   */
  putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath = '',
  ): Promise<void> {
    return this.#track(this.#putWrites(config, writes, taskId, taskPath));
  }

  async #putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath: string,
  ): Promise<void> {
    const threadId = requireThreadId(config, 'putWrites');
    const { checkpointNs, checkpointId } = readAddress(config);
    if (!checkpointId) {
      throw new VeridexError(
        'config_invalid',
        'putWrites needs config.configurable.checkpoint_id (the checkpoint the writes belong to); it was missing.',
      );
    }
    if (writes.length === 0) return;
    const plan = await planWrites(
      { threadId, checkpointNs, checkpointId, taskId, taskPath, writes },
      this.#encoding(undefined),
    );
    await this.#writes.submit(threadId, plan);
  }

  async #storeWrites(threadId: string, plans: readonly WritesPlan[]): Promise<void> {
    const db = await this.database();
    await callStored(db, PUT_WRITES, [...writesParams(threadId, plans), this.#synchronousCommit]);
    this.#tuples.afterWrites(threadId, plans);
  }

  /**
   * Per-channel writes and seed for rebuilding `DeltaChannel` state (see the base class),
   * in one recursive query rather than one `getTuple` per ancestor.
   */
  override async getDeltaChannelHistory(options: {
    config: RunnableConfig;
    channels: string[];
  }): Promise<Record<string, DeltaChannelHistory>> {
    const db = await this.database();
    return readDeltaChannelHistory(db, this.serde, options.config, options.channels);
  }

  /** Deletes everything stored for a thread, in every namespace. */
  async deleteThread(threadId: string): Promise<void> {
    const db = await this.database();
    await db.transaction(async (tx) => {
      await tx.query(LOCK_THREAD_EXCLUSIVE, [String(threadId)]);
      await tx.query(DELETE_THREAD, [String(threadId)]);
    });
    this.#sequences.forgetThread(String(threadId));
    this.#tuples.forgetThread(String(threadId));
  }

  /**
   * Recomputes every hash of a thread from what is stored and reports checkpoints or writes
   * that were modified, deleted, inserted or reordered outside the checkpointer.
   *
   * @example
   * const report = await checkpointer.verifyThread('thread-1');
   * if (!report.valid) throw new Error(report.issues.map((issue) => issue.message).join('; '));
   */
  async verifyThread(threadId: string, options?: VerifyThreadOptions): Promise<ThreadVerification> {
    return verifyThread(await this.database(), String(threadId), options);
  }

  /**
   * Removes old checkpoints of a thread and the values nothing else uses, keeping the newest
   * `keepLast` per namespace and anything a pending interrupt, pending writes or a delta
   * channel still needs (see {@link pruneThread}).
   *
   * @example await checkpointer.prune('thread-1', { keepLast: 10 });
   */
  async prune(threadId: string, options: PruneOptions): Promise<PruneResult> {
    const result = await pruneThread(await this.database(), String(threadId), options);
    this.#sequences.forgetThread(String(threadId));
    this.#tuples.forgetThread(String(threadId));
    return result;
  }

  /**
   * Resolves once no `put` or `putWrites` is in flight: each one started before or while
   * waiting has finished, committed or failed. LangGraph does not always wait for them: when a run is aborted, `invoke` rejects
   * while the last checkpoint may still be on its way. Call this before reading the thread's
   * state after a failed run, or before shutting down.
   *
   * @example
   * await graph.invoke(input, { ...config, signal }).catch(() => undefined);
   * await checkpointer.settled();
   * const state = await graph.getState(config);
   */
  async settled(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  /**
   * Waits for writes in flight ({@link PostgresCheckpointer.settled}), then closes the
   * database if this checkpointer opened it (`fromUrl`).
   */
  async close(): Promise<void> {
    await this.settled();
    if (this.#owned) await (await this.#database).close();
  }

  /** Alias of {@link PostgresCheckpointer.close}, named like the official saver's method. */
  end(): Promise<void> {
    return this.close();
  }

  #track<T>(operation: Promise<T>): Promise<T> {
    this.#inFlight.add(operation);
    const done = () => this.#inFlight.delete(operation);
    operation.then(done, done);
    return operation;
  }

  #encoding(sequences: SequenceCache | undefined): EncodingContext {
    return { serde: this.serde, listStorage: this.#listStorage, sequences };
  }
}

function isSequenceConflict(error: unknown): boolean {
  if (!VeridexError.is(error, 'db_query_failed')) return false;
  if (error.details.constraint === SEQUENCE_ITEMS_KEY) return true;
  return error.message.includes(SEQUENCE_PREFIX_MISSING);
}
