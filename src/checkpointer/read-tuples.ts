import {
  type CheckpointPendingWrite,
  type CheckpointTuple,
  compareWritesSortKeys,
  type SerializerProtocol,
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

/**
 * One checkpoint tuple with its values still serialised: what a read statement returns for
 * it, and what the tuple cache keeps. {@link draftToTuple} deserialises it.
 */
export interface TupleDraft {
  threadId: string;
  checkpointNs: string;
  checkpointId: string;
  parentCheckpointId: string | null;
  /** The stored checkpoint JSON, without `id` and `channel_values`. */
  checkpointText: string;
  /** The metadata JSON as PostgreSQL's jsonb prints it. */
  metadataText: string;
  values: Array<[channel: string, stored: StoredData]>;
  writes: DraftWrite[];
}

/** A pending write of a {@link TupleDraft}. */
export interface DraftWrite {
  taskId: string;
  taskPath: string;
  idx: number;
  channel: string;
  stored: StoredData;
}

interface RowDraft {
  row: ReadRow;
  refs: Array<[channel: string, digest: string]>;
  writes: DraftWrite[];
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
  return Promise.all(rowsToDrafts(rows).map((draft) => draftToTuple(draft, serde)));
}

/**
 * The rows of one read statement as serialised tuples, in the statement's order.
 *
 * @throws VeridexError `checkpoint_invalid` when a referenced value or list element is missing.
 */
export function rowsToDrafts(rows: readonly ReadRow[]): TupleDraft[] {
  const values = new Map<string, StoredData>();
  const lists = new Map<string, PendingList>();
  const elements = new Map<string, Array<string | null>>();
  const drafts = new Map<string, RowDraft>();
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
        taskId,
        taskPath: row.text3 ?? '',
        idx: row.idx!,
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
  return [...drafts.values()].map(({ row, refs, writes }) => {
    const draft: TupleDraft = {
      threadId: row.thread_id!,
      checkpointNs: row.checkpoint_ns!,
      checkpointId: row.checkpoint_id!,
      parentCheckpointId: row.name,
      checkpointText: row.text1!,
      metadataText: row.text2!,
      values: [],
      writes,
    };
    for (const [channel, digest] of refs) {
      const stored = values.get(digest);
      if (!stored) {
        throw new VeridexError(
          'checkpoint_invalid',
          `Checkpoint ${draft.checkpointId} of thread "${draft.threadId}" refers to a stored value of channel "${channel}" that no longer exists. It was deleted outside the checkpointer; run verifyThread() to see what changed.`,
          {
            details: {
              threadId: draft.threadId,
              checkpointNs: draft.checkpointNs,
              checkpointId: draft.checkpointId,
              channel,
            },
          },
        );
      }
      draft.values.push([channel, stored]);
    }
    return draft;
  });
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

/**
 * Deserialises a draft into a fresh checkpoint tuple. `copyBytes` hands the serde copies of
 * non-JSON binary values (a serde may return those as they are), for drafts that are kept
 * and read again.
 */
export async function draftToTuple(
  draft: TupleDraft,
  serde: SerializerProtocol,
  copyBytes = false,
): Promise<CheckpointTuple> {
  const { threadId, checkpointNs, checkpointId } = draft;
  const load = (stored: StoredData) =>
    loadStored(
      serde,
      copyBytes && stored.type !== 'json' && typeof stored.data !== 'string'
        ? { type: stored.type, data: stored.data.slice() }
        : stored,
    );
  const channelValues: Record<string, unknown> = {};
  const loaded = await Promise.all(draft.values.map(([, stored]) => load(stored)));
  draft.values.forEach(([channel], index) => {
    channelValues[channel] = loaded[index];
  });
  const writes = draft.writes
    .map((write) => ({ write, key: writesSortKey(write.taskPath, write.taskId, write.idx) }))
    .sort((left, right) => compareWritesSortKeys(left.key, right.key));
  const pendingWrites: CheckpointPendingWrite[] = await Promise.all(
    writes.map(
      async ({ write }): Promise<CheckpointPendingWrite> => [
        write.taskId,
        write.channel,
        await load(write.stored),
      ],
    ),
  );
  const checkpoint = JSON.parse(draft.checkpointText);
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
    metadata: await serde.loadsTyped('json', draft.metadataText),
    pendingWrites,
  };
  if (draft.parentCheckpointId !== null) {
    tuple.parentConfig = {
      configurable: {
        thread_id: threadId,
        checkpoint_ns: checkpointNs,
        checkpoint_id: draft.parentCheckpointId,
      },
    };
  }
  return tuple;
}

function tupleKey(row: ReadRow): string {
  return `${row.thread_id}\u0000${row.checkpoint_ns}\u0000${row.checkpoint_id}`;
}
