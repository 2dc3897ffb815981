import type { RunnableConfig } from '@langchain/core/runnables';
import { getCheckpointId } from '@langchain/langgraph-checkpoint';
import { createDatabase, type Database } from '../db/index.js';
import { VeridexError } from '../errors/index.js';

/** The thread, namespace and checkpoint a LangGraph config points at. */
export interface CheckpointAddress {
  /** As given (LangGraph accepts any value; it is stored as its string form). */
  threadId: unknown;
  checkpointNs: string;
  /** `checkpoint_id` (or the legacy `thread_ts`); empty when absent. */
  checkpointId: string;
}

/** Reads the address from `config.configurable`; `threadId` may be undefined. */
export function readAddress(config: RunnableConfig): CheckpointAddress {
  const configurable = config.configurable ?? {};
  return {
    threadId: configurable.thread_id,
    checkpointNs: configurable.checkpoint_ns ?? '',
    checkpointId: getCheckpointId(config),
  };
}

/**
 * The thread id of `config` as stored.
 *
 * @throws VeridexError `config_invalid` when `configurable` or its `thread_id` is missing.
 */
export function requireThreadId(config: RunnableConfig, operation: string): string {
  if (config.configurable === undefined) {
    throw new VeridexError(
      'config_invalid',
      `${operation} needs config.configurable with a thread_id, e.g. { configurable: { thread_id: "t1" } }; it was missing.`,
    );
  }
  const threadId = config.configurable.thread_id;
  if (threadId === undefined || threadId === null || threadId === '') {
    throw new VeridexError(
      'config_invalid',
      `${operation} needs config.configurable.thread_id so the checkpointer knows which thread to use; it was missing. Pass { configurable: { thread_id: "t1" } }.`,
    );
  }
  return String(threadId);
}

/**
 * Opens the database a connection string names: `postgres://…` / `postgresql://…` for a
 * server, `memory://` for in-memory PGlite, `file://<dir>` for PGlite on disk.
 *
 * @throws VeridexError `config_invalid` for any other scheme.
 */
export function openDatabaseFromUrl(url: string, schema?: string): Promise<Database> {
  const withSchema = schema === undefined ? {} : { schema };
  if (/^postgres(ql)?:\/\//i.test(url)) return createDatabase({ url, ...withSchema });
  if (url.startsWith('memory://')) return createDatabase({ dataDir: 'memory://', ...withSchema });
  if (url.startsWith('file://')) {
    return createDatabase({
      dataDir: decodeURIComponent(url.slice('file://'.length)),
      ...withSchema,
    });
  }
  return Promise.reject(
    new VeridexError(
      'config_invalid',
      `Unsupported checkpointer URL scheme in "${url.split(':')[0]}:…": use postgres://user@host:5432/db, memory:// or file://<directory>.`,
    ),
  );
}
