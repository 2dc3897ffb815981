import type { RunnableConfig } from '@langchain/core/runnables';
import {
  type CheckpointPendingWrite,
  compareWritesSortKeys,
  type DeltaChannelHistory,
  type SerializerProtocol,
  type WritesSortKey,
  writesSortKey,
} from '@langchain/langgraph-checkpoint';
import type { Queryable } from '../db/index.js';
import { readAddress } from './checkpoint-config.js';
import { callStored } from './install-functions.js';
import { loadStored, type ReadRow, type StoredData, storedData } from './read-tuples.js';
import { DELTA_CHANNEL_HISTORY } from './sql.js';

interface HistoryWrite {
  depth: number;
  key: WritesSortKey;
  taskId: string;
  channel: string;
  stored: StoredData;
}

/**
 * `getDeltaChannelHistory` in one query instead of one `getTuple` per ancestor: the same
 * contract as the base class (walk parents from the target's parent; per channel, stop at
 * the nearest ancestor with a stored value, its `seed`; collect that channel's writes on the
 * way, oldest first, each checkpoint's writes in `writesSortKey` order).
 */
export async function readDeltaChannelHistory(
  db: Queryable,
  serde: SerializerProtocol,
  config: RunnableConfig,
  channels: readonly string[],
): Promise<Record<string, DeltaChannelHistory>> {
  if (channels.length === 0) return {};
  const { threadId, checkpointNs, checkpointId } = readAddress(config);
  const rows =
    threadId === undefined || threadId === null
      ? []
      : (
          await callStored<ReadRow>(db, DELTA_CHANNEL_HISTORY, [
            String(threadId),
            checkpointNs,
            checkpointId,
            [...channels],
          ])
        ).rows;
  const seeds = new Map<string, StoredData>();
  const writes: HistoryWrite[] = [];
  for (const row of rows) {
    if (row.kind === 2) seeds.set(row.name!, storedData(row, row.text2!, `seed of ${row.name}`));
    else {
      writes.push({
        depth: Number(row.ordering),
        key: writesSortKey(row.text3 ?? '', row.name!, row.idx!),
        taskId: row.name!,
        channel: row.text1!,
        stored: storedData(row, row.text2!, `write of task ${row.name}`),
      });
    }
  }
  // Oldest ancestor first (deepest), then LangGraph's order within a superstep.
  writes.sort(
    (left, right) => right.depth - left.depth || compareWritesSortKeys(left.key, right.key),
  );
  const result: Record<string, DeltaChannelHistory> = {};
  for (const channel of channels) {
    const entry: DeltaChannelHistory = {
      writes: await Promise.all(
        writes
          .filter((write) => write.channel === channel)
          .map(
            async (write): Promise<CheckpointPendingWrite> => [
              write.taskId,
              channel,
              await loadStored(serde, write.stored),
            ],
          ),
      ),
    };
    const seed = seeds.get(channel);
    if (seed) entry.seed = await loadStored(serde, seed);
    result[channel] = entry;
  }
  return result;
}
