import { type PendingWrite, WRITES_IDX_MAP } from '@langchain/langgraph-checkpoint';
import { valueDigest, writeHash } from './checkpoint-hash.js';
import { type ListElement, serializeValue, splitListValue } from './encoded-value.js';
import type { EncodingContext } from './put-plan.js';

/** Everything `putWrites` receives, normalised. */
export interface WritesInput {
  threadId: string;
  checkpointNs: string;
  checkpointId: string;
  taskId: string;
  taskPath: string;
  writes: readonly PendingWrite[];
}

/** One row of `veridex_checkpoint_writes`, ready to insert. */
export interface WriteRow {
  idx: number;
  channel: string;
  type: string;
  blob: Uint8Array | null;
  /** Concatenated element digests, for a list stored by element. */
  manifest: Buffer | null;
  hash: Buffer;
  /** The serialised value (what a read gives back), for the tuple cache. */
  serialized: Uint8Array;
}

/** One `putWrites` call, serialised. */
export interface WritesPlan {
  input: WritesInput;
  rows: WriteRow[];
  elements: ListElement[];
  /**
   * True when every write is a special one (error, interrupt, scheduled, resume): those
   * replace an earlier row, as in the official saver; regular writes never do.
   */
  replace: boolean;
}

/**
 * Serialises a task's writes. `idx` is the write's position, except for special channels,
 * which take their fixed negative index from `WRITES_IDX_MAP` so they never collide with
 * regular writes. Large JSON lists are stored as element digests, sharing element rows with
 * the list values of checkpoints.
 */
export async function planWrites(
  input: WritesInput,
  context: Pick<EncodingContext, 'serde' | 'listStorage'>,
): Promise<WritesPlan> {
  const replace = input.writes.every(([channel]) => channel in WRITES_IDX_MAP);
  // Special writes share a fixed index per channel; keep the last of each.
  const writes = replace
    ? [...new Map(input.writes.map((write) => [write[0], write])).values()]
    : input.writes;
  const serialized = await Promise.all(
    writes.map(([, value]) => serializeValue(context.serde, value)),
  );
  const elements = new Map<string, ListElement>();
  const rows = writes.map(([channel], index): WriteRow => {
    const value = serialized[index]!;
    const idx = WRITES_IDX_MAP[channel] ?? index;
    const listed = splitListValue(value, context.listStorage);
    for (const element of listed ?? []) elements.set(element.digest.toString('hex'), element);
    return {
      idx,
      channel,
      type: value.type,
      blob: listed ? null : value.bytes,
      manifest: listed ? Buffer.concat(listed.map((element) => element.digest)) : null,
      serialized: value.bytes,
      hash: writeHash({
        threadId: input.threadId,
        checkpointNs: input.checkpointNs,
        checkpointId: input.checkpointId,
        taskId: input.taskId,
        taskPath: input.taskPath,
        idx,
        channel,
        type: value.type,
        valueDigest: valueDigest(value.type, value.bytes).toString('hex'),
      }),
    };
  });
  return { input, rows, elements: [...elements.values()], replace };
}

/** The parameters of `PUT_WRITES` for plans of one thread, stored together. */
export function writesParams(threadId: string, plans: readonly WritesPlan[]): unknown[] {
  const columns = {
    ns: [] as string[],
    checkpointIds: [] as string[],
    taskIds: [] as string[],
    taskPaths: [] as string[],
    idx: [] as number[],
    channels: [] as string[],
    types: [] as string[],
    blobs: [] as Array<Uint8Array | null>,
    manifests: [] as Array<Buffer | null>,
    hashes: [] as Buffer[],
    replace: [] as boolean[],
  };
  const elements = new Map<string, ListElement>();
  for (const plan of plans) {
    for (const row of plan.rows) {
      columns.ns.push(plan.input.checkpointNs);
      columns.checkpointIds.push(plan.input.checkpointId);
      columns.taskIds.push(plan.input.taskId);
      columns.taskPaths.push(plan.input.taskPath);
      columns.idx.push(row.idx);
      columns.channels.push(row.channel);
      columns.types.push(row.type);
      columns.blobs.push(row.blob);
      columns.manifests.push(row.manifest);
      columns.hashes.push(row.hash);
      columns.replace.push(plan.replace);
    }
    for (const element of plan.elements) elements.set(element.digest.toString('hex'), element);
  }
  const elementList = [...elements.values()];
  return [
    threadId,
    ...Object.values(columns),
    elementList.map((element) => element.digest),
    elementList.map((element) => element.body),
  ];
}
