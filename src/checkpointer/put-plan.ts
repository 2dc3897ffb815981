import { randomBytes } from 'node:crypto';
import type {
  ChannelVersions,
  Checkpoint,
  CheckpointMetadata,
  SerializerProtocol,
} from '@langchain/langgraph-checkpoint';
import { checkpointContentDigest, valueDigest } from './checkpoint-hash.js';
import {
  isListWorthSplitting,
  type ListElement,
  type ListStorageOptions,
  listElements,
  type SerializedValue,
  serializeValue,
  splitListValue,
} from './encoded-value.js';
import {
  type KnownSequence,
  prefixDigest,
  type SequenceCache,
  sequenceKey,
} from './sequence-cache.js';
import { encodeRef, INLINE_MAX_BYTES, REF_BLOB, REF_INLINE, REF_SEQUENCE } from './value-ref.js';

/** Everything `put` receives, normalised. */
export interface PutInput {
  threadId: string;
  checkpointNs: string;
  parentCheckpointId: string | undefined;
  checkpoint: Checkpoint;
  metadata: CheckpointMetadata;
  newVersions: ChannelVersions;
}

/** How values are encoded. */
export interface EncodingContext {
  serde: SerializerProtocol;
  listStorage: ListStorageOptions | false;
  /** Absent to write every list as a fresh sequence (the retry after a conflict does this). */
  sequences: SequenceCache | undefined;
}

/** The parameters of `PUT_CHECKPOINT` and the sequences to remember once it committed. */
export interface PutPlan {
  params: unknown[];
  remember: Array<[key: string, known: KnownSequence]>;
  /** What the row will hold, for the tuple cache. */
  stored: StoredCheckpoint;
}

/** A checkpoint as the put statement stores it. */
export interface StoredCheckpoint {
  /** The checkpoint JSON without `id` and `channel_values`. */
  checkpointText: string;
  metadataText: string;
  contentDigest: Buffer;
  /** The values it writes, in stored order. */
  values: Array<[channel: string, value: SerializedValue]>;
  /** Channels whose values it takes from its parent, if the parent has the same version. */
  carried: string[];
}

/**
 * Serialises a checkpoint into the parameters of the one put statement: the checkpoint row
 * with a reference per value it writes (small values inline, lists as sequence items and
 * elements, other values as content-addressed blobs), and the channels whose references it
 * copies from its parent.
 */
export async function planPut(input: PutInput, context: EncodingContext): Promise<PutPlan> {
  const { checkpoint, newVersions } = input;
  const { id: _id, channel_values: channelValues, ...stored } = checkpoint;
  const checkpointText = JSON.stringify(stored);
  const [, metadataBytes] = await context.serde.dumpsTyped(input.metadata);
  const metadataText = new TextDecoder().decode(metadataBytes);

  const newChannels = Object.keys(newVersions).filter((channel) => channel in channelValues);
  const serialized = await Promise.all(
    newChannels.map((channel) =>
      serializeValue(context.serde, (channelValues as Record<string, unknown>)[channel]),
    ),
  );
  const refs: Buffer[] = [];
  const digests: string[] = [];
  const blobs = new Map<string, { digest: Buffer; bytes: Uint8Array }>();
  const elements = new Map<string, ListElement>();
  const items = { sequences: [] as string[], positions: [] as number[], digests: [] as Buffer[] };
  const prefixes = { sequences: [] as string[], lengths: [] as number[] };
  const remember: PutPlan['remember'] = [];

  newChannels.forEach((channel, index) => {
    const value = serialized[index]!;
    const digest = valueDigest(value.type, value.bytes);
    digests.push(digest.toString('hex'));
    const key = sequenceKey(input.threadId, input.checkpointNs, channel);
    const list = isListWorthSplitting(value, context.listStorage)
      ? planSequence(value, key, context)
      : undefined;
    if (!list) {
      if (value.bytes.length <= INLINE_MAX_BYTES) {
        refs.push(encodeRef({ kind: REF_INLINE, type: value.type, bytes: value.bytes }));
      } else {
        blobs.set(digest.toString('hex'), { digest, bytes: value.bytes });
        refs.push(encodeRef({ kind: REF_BLOB, type: value.type, digest }));
      }
      return;
    }
    const length = list.start + list.elements.length;
    refs.push(
      encodeRef({ kind: REF_SEQUENCE, type: value.type, sequenceId: list.sequenceId, length }),
    );
    if (list.start > 0) {
      prefixes.sequences.push(list.sequenceId);
      prefixes.lengths.push(list.start);
    }
    list.elements.forEach((element, offset) => {
      elements.set(element.digest.toString('hex'), element);
      items.sequences.push(list.sequenceId);
      items.positions.push(list.start + offset);
      items.digests.push(element.digest);
    });
    const closing = value.bytes.length - 1;
    remember.push([
      key,
      {
        sequenceId: list.sequenceId,
        length,
        prefixBytes: closing,
        prefixDigest: prefixDigest(value.bytes, closing),
      },
    ]);
  });

  const carried = Object.keys(checkpoint.channel_versions).filter(
    (channel) => !(channel in newVersions),
  );
  const contentDigest = checkpointContentDigest({
    threadId: input.threadId,
    checkpointNs: input.checkpointNs,
    checkpointId: checkpoint.id,
    parentCheckpointId: input.parentCheckpointId ?? null,
    checkpoint: JSON.parse(checkpointText),
    metadata: JSON.parse(metadataText),
    values: newChannels.map((channel, index) => [channel, digests[index]!]),
  });
  const blobList = [...blobs.values()];
  const elementList = [...elements.values()];
  return {
    params: [
      input.threadId,
      input.checkpointNs,
      checkpoint.id,
      input.parentCheckpointId ?? null,
      checkpointText,
      metadataText,
      contentDigest,
      newChannels,
      refs,
      carried,
      carried.map((channel) => String(checkpoint.channel_versions[channel])),
      blobList.map((blob) => blob.digest),
      blobList.map((blob) => blob.bytes),
      elementList.map((element) => element.digest),
      elementList.map((element) => element.body),
      items.sequences,
      items.positions,
      items.digests,
      prefixes.sequences,
      prefixes.lengths,
    ],
    remember,
    stored: {
      checkpointText,
      metadataText,
      contentDigest,
      values: newChannels.map((channel, index) => [channel, serialized[index]!]),
      carried,
    },
  };
}

interface PlannedSequence {
  sequenceId: string;
  /** Position of the first new element (the length of the stored prefix). */
  start: number;
  elements: ListElement[];
}

function planSequence(
  value: SerializedValue,
  key: string,
  context: EncodingContext,
): PlannedSequence | undefined {
  const known = context.sequences?.match(key, value.bytes);
  if (known) {
    const appended = listElements(value.bytes, known.prefixBytes + 1);
    if (appended) return { sequenceId: known.sequenceId, start: known.length, elements: appended };
  }
  const elements = splitListValue(value, context.listStorage);
  return elements ? { sequenceId: newSequenceId(), start: 0, elements } : undefined;
}

/** A random positive 63-bit id: sequences never need to be ordered, only distinct per thread. */
function newSequenceId(): string {
  return (randomBytes(8).readBigUInt64BE() >> 1n).toString();
}
