import type { RunnableConfig } from '@langchain/core/runnables';
import type { CheckpointListOptions } from '@langchain/langgraph-checkpoint';
import { LIST_THREAD_CHECKPOINTS, listCheckpointsSql } from './sql.js';

/** Builds the statement for one page of `list`, given the last tuple of the previous page. */
export type PageFetcher = (
  pageSize: number,
  cursor: Record<string, unknown> | undefined,
) => { sql: string; params: unknown[]; prepareAs?: string };

/**
 * How `list` fetches each page: one thread's namespace (what LangGraph's state history asks
 * for) through the stored function, anything else through a statement built for its filters.
 */
export function pageFetcher(config: RunnableConfig, options: CheckpointListOptions): PageFetcher {
  const configurable = config.configurable ?? {};
  const filter =
    options.filter && Object.keys(options.filter).length > 0
      ? JSON.stringify(options.filter)
      : undefined;
  const before = options.before?.configurable?.checkpoint_id as string | undefined;
  const threadId = configurable.thread_id;
  const checkpointNs = configurable.checkpoint_ns;
  const shape = {
    threadId: threadId !== undefined && threadId !== null,
    checkpointNs: checkpointNs !== undefined && checkpointNs !== null,
    checkpointId: Boolean(configurable.checkpoint_id),
    filter: filter !== undefined,
    before: before !== undefined,
    cursor: false,
  };
  if (shape.threadId && shape.checkpointNs && !shape.checkpointId) {
    return (pageSize, cursor) => ({
      sql: LIST_THREAD_CHECKPOINTS.call,
      prepareAs: LIST_THREAD_CHECKPOINTS.name,
      params: [
        pageSize,
        String(threadId),
        checkpointNs,
        (cursor?.checkpoint_id as string | undefined) ?? before ?? null,
        filter ?? null,
      ],
    });
  }
  const filters: unknown[] = [];
  if (shape.threadId) filters.push(String(threadId));
  if (shape.checkpointNs) filters.push(checkpointNs);
  if (shape.checkpointId) filters.push(configurable.checkpoint_id);
  if (shape.filter) filters.push(filter);
  if (shape.before) filters.push(before);
  return (pageSize, cursor) => {
    const paged = { ...shape, cursor: cursor !== undefined };
    const after = cursor ? [cursor.checkpoint_id, cursor.thread_id, cursor.checkpoint_ns] : [];
    return { sql: listCheckpointsSql(paged), params: [pageSize, ...filters, ...after] };
  };
}
