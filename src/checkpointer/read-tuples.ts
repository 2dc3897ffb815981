import {
  type CheckpointPendingWrite,
  type CheckpointTuple,
  compareWritesSortKeys,
  type SerializerProtocol,
  type WritesSortKey,
  writesSortKey,
} from '@langchain/langgraph-checkpoint';
import { VeridexError } from '../errors/index.js';

/** One row of the read statements in sql.ts (see `READ_TAIL` for what each kind carries). */
export interface ReadRow {
  kind: number;
  ordering: string | number | null;
  thread_id: string | null;
  checkpoint_ns: string | null;
  checkpoint_id: string | null;
  name: string | null;
  text1: string | null;
  text2: string | null;
  text3: string | null;
  blob: Buffer | null;
  body: string | null;
  idx: number | null;
  expected: number | null;
  actual: number | null;
}

/** A stored value as read: its serde type and either reassembled list text or the blob. */
export interface StoredData {
  type: string;
  data: string | Uint8Array;
}

interface Draft {
  row: ReadRow;
  refs: Array<[channel: string, digest: string]>;
  writes: Array<{ key: WritesSortKey; taskId: string; channel: string; stored: StoredData }>;
}

const KIND_CHECKPOINT = 0;
const KIND_REFERENCE = 1;
const KIND_VALUE = 2;
const KIND_WRITE = 3;
const KIND_ELEMENT = 4;

interface PendingList {
  type: string;
  sequenceId: string;
  length: number;
}

/**
 * Turns the rows of one read statement into checkpoint tuples, in the statement's order.
 * Each value reference is deserialised on its own, so no two tuples share an object.
 * Pending writes come back in `writesSortKey` order, sorted with LangGraph's own comparator.
 *
 * @throws VeridexError `checkpoint_invalid` when a referenced value or list element is missing.
 */
export async function rowsToTuples(
  rows: readonly ReadRow[],
  serde: SerializerProtocol,
): Promise<CheckpointTuple[]> {
  const values = new Map<string, StoredData>();
  const lists = new Map<string, PendingList>();
  const elements = new Map<string, Array<string | null>>();
  const drafts = new Map<string, Draft>();
  for (const row of rows) {
    if (row.kind === KIND_CHECKPOINT) {
      drafts.set(tupleKey(row), { row, refs: [], writes: [] });
    } else if (row.kind === KIND_VALUE) {
      if (row.name === null) values.set(row.text1!, storedData(row, row.text2!, `a value`));
      else lists.set(row.text1!, { type: row.text2!, sequenceId: row.name, length: row.expected! });
    } else if (row.kind === KIND_REFERENCE) {
      drafts.get(tupleKey(row))?.refs.push([row.name!, row.text1!]);
    } else if (row.kind === KIND_WRITE) {
      const taskId = row.name!;
      drafts.get(tupleKey(row))?.writes.push({
        key: writesSortKey(row.text3 ?? '', taskId, row.idx!),
        taskId,
        channel: row.text1!,
        stored: storedData(row, row.text2!, `pending write of task ${taskId}`),
      });
    } else if (row.kind === KIND_ELEMENT) {
      const bodies = elements.get(row.name!) ?? [];
      bodies[Number(row.ordering)] = row.body;
      elements.set(row.name!, bodies);
    }
  }
  for (const [ref, list] of lists)
    values.set(ref, assembleList(list, elements.get(list.sequenceId)));
  return Promise.all([...drafts.values()].map((draft) => buildTuple(draft, values, serde)));
}

/** A list value: the first `length` elements of its sequence, as the JSON text the serde wrote. */
function assembleList(list: PendingList, bodies: ReadonlyArray<string | null> = []): StoredData {
  let found = 0;
  for (let position = 0; position < list.length; position++) if (bodies[position]) found++;
  if (found !== list.length) {
    return storedData(
      { blob: null, body: null, expected: list.length, actual: found },
      list.type,
      'a list',
    );
  }
  return { type: list.type, data: `[${bodies.slice(0, list.length).join(',')}]` };
}

/** Deserialises one stored value with the saver's serde. */
export function loadStored(serde: SerializerProtocol, stored: StoredData): Promise<unknown> {
  return serde.loadsTyped(stored.type, stored.data);
}

/**
 * The stored data of a value or write row, after checking that a list was reassembled from
 * all of its elements.
 */
export function storedData(
  row: Pick<ReadRow, 'blob' | 'body' | 'expected' | 'actual'>,
  type: string,
  what: string,
): StoredData {
  if (row.expected !== null && row.expected !== row.actual) {
    throw new VeridexError(
      'checkpoint_invalid',
      `Stored checkpoint data is incomplete: ${what} should have ${row.expected} list elements but ${row.actual ?? 0} were found. The rows were deleted or edited outside the checkpointer; run verifyThread() to see what changed.`,
      { details: { expected: row.expected, actual: row.actual ?? 0 } },
    );
  }
  if (row.body !== null) return { type, data: row.body };
  const blob = row.blob ?? new Uint8Array();
  // node-postgres returns Buffer; hand the serde a plain Uint8Array, as it was given on put.
  return { type, data: new Uint8Array(blob.buffer, blob.byteOffset, blob.byteLength) };
}

async function buildTuple(
  draft: Draft,
  values: ReadonlyMap<string, StoredData>,
  serde: SerializerProtocol,
): Promise<CheckpointTuple> {
  const { row } = draft;
  const threadId = row.thread_id!;
  const checkpointNs = row.checkpoint_ns!;
  const checkpointId = row.checkpoint_id!;
  const channelValues: Record<string, unknown> = {};
  const loaded = await Promise.all(
    draft.refs.map(([channel, digest]) => {
      const stored = values.get(digest);
      if (!stored) {
        throw new VeridexError(
          'checkpoint_invalid',
          `Checkpoint ${checkpointId} of thread "${threadId}" refers to a stored value of channel "${channel}" that no longer exists. It was deleted outside the checkpointer; run verifyThread() to see what changed.`,
          { details: { threadId, checkpointNs, checkpointId, channel } },
        );
      }
      return loadStored(serde, stored);
    }),
  );
  draft.refs.forEach(([channel], index) => {
    channelValues[channel] = loaded[index];
  });
  draft.writes.sort((left, right) => compareWritesSortKeys(left.key, right.key));
  const pendingWrites: CheckpointPendingWrite[] = await Promise.all(
    draft.writes.map(
      async (write): Promise<CheckpointPendingWrite> => [
        write.taskId,
        write.channel,
        await loadStored(serde, write.stored),
      ],
    ),
  );
  const checkpoint = JSON.parse(row.text1!);
  checkpoint.id = checkpointId;
  checkpoint.channel_values = channelValues;
  const tuple: CheckpointTuple = {
    config: {
      configurable: {
        thread_id: threadId,
        checkpoint_ns: checkpointNs,
        checkpoint_id: checkpointId,
      },
    },
    checkpoint,
    metadata: await serde.loadsTyped('json', row.text2!),
    pendingWrites,
  };
  if (row.name !== null) {
    tuple.parentConfig = {
      configurable: { thread_id: threadId, checkpoint_ns: checkpointNs, checkpoint_id: row.name },
    };
  }
  return tuple;
}

function tupleKey(row: ReadRow): string {
  return `${row.thread_id}\u0000${row.checkpoint_ns}\u0000${row.checkpoint_id}`;
}
