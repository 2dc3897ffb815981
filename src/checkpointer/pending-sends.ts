import {
  type CheckpointTuple,
  maxChannelVersion,
  type SerializerProtocol,
  TASKS,
} from '@langchain/langgraph-checkpoint';
import type { Queryable } from '../db/index.js';
import { loadStored, storedData } from './read-tuples.js';
import { SELECT_PENDING_SENDS } from './sql.js';

interface SendRow {
  checkpoint_id: string;
  type: string;
  blob: Buffer | null;
  body: string | null;
  expected: number | null;
  actual: number | null;
}

/**
 * Checkpoints written before format v4 kept pending `Send`s as writes on their parent rather
 * than in the `__pregel_tasks` channel. Like the official savers, move them into the channel
 * when such a checkpoint is read (one extra query, only when an old checkpoint is present).
 */
export async function migratePendingSends(
  tuples: CheckpointTuple[],
  db: Queryable,
  serde: SerializerProtocol,
  firstVersion: () => number | string,
): Promise<void> {
  const legacy = tuples.filter((tuple) => tuple.checkpoint.v < 4 && tuple.parentConfig);
  if (legacy.length === 0) return;
  for (const tuple of legacy) {
    const { thread_id: threadId, checkpoint_ns: checkpointNs } = tuple.config.configurable!;
    const parentId = tuple.parentConfig!.configurable!.checkpoint_id as string;
    const { rows } = await db.query<SendRow>(SELECT_PENDING_SENDS, [
      threadId,
      checkpointNs,
      [parentId],
    ]);
    if (rows.length === 0) continue;
    const sends = await Promise.all(
      rows.map((row) => loadStored(serde, storedData(row, row.type, 'a pending send'))),
    );
    const { checkpoint } = tuple;
    checkpoint.channel_values[TASKS] = sends;
    const versions = Object.values(checkpoint.channel_versions);
    checkpoint.channel_versions[TASKS] =
      versions.length > 0 ? maxChannelVersion(...versions) : firstVersion();
  }
}
