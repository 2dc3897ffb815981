import type { SerializerProtocol } from '@langchain/langgraph-checkpoint';
import { elementDigest } from './checkpoint-hash.js';
import { type ByteRange, isJsonArrayText, splitJsonArray } from './split-json-array.js';

/** A value as the serde wrote it. */
export interface SerializedValue {
  type: string;
  bytes: Uint8Array;
}

/** One list element: its exact JSON text and the digest it is stored under. */
export interface ListElement {
  digest: Buffer;
  body: string;
}

/** When a JSON list is stored element by element instead of as one blob. */
export interface ListStorageOptions {
  /** Lists whose serialised form is smaller are stored whole. Default 256 bytes. */
  minBytes: number;
  /** Lists of smaller elements on average are stored whole (each element costs ~100 bytes of row overhead). Default 48. */
  minElementBytes: number;
}

export const DEFAULT_LIST_STORAGE: ListStorageOptions = { minBytes: 256, minElementBytes: 48 };

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Serialises `value` with the saver's serde (the same call the official saver makes). */
export async function serializeValue(
  serde: SerializerProtocol,
  value: unknown,
): Promise<SerializedValue> {
  const [type, bytes] = await serde.dumpsTyped(value);
  return { type, bytes };
}

/** True when `serialized` is a JSON list big enough to be worth storing element by element. */
export function isListWorthSplitting(
  serialized: SerializedValue,
  options: ListStorageOptions | false,
): boolean {
  return (
    options !== false &&
    serialized.type === 'json' &&
    serialized.bytes.length >= options.minBytes &&
    isJsonArrayText(serialized.bytes)
  );
}

/**
 * The elements of the JSON list in `bytes` between `from` (just after `[` or a comma) and
 * the closing bracket, or `undefined` when they cannot be stored as separate texts (not
 * well-formed, or not valid UTF-8: the element is stored as text and must decode exactly).
 */
export function listElements(bytes: Uint8Array, from: number): ListElement[] | undefined {
  const to = bytes.length - 1;
  if (from >= to) return [];
  const ranges = splitJsonArray(bytes, from, to);
  if (!ranges) return undefined;
  return decodeRanges(bytes, ranges);
}

/**
 * The elements of `serialized` when it should be stored element by element: a JSON list of
 * at least `minBytes` whose elements average at least `minElementBytes`. `undefined` means
 * store it whole.
 */
export function splitListValue(
  serialized: SerializedValue,
  options: ListStorageOptions | false,
): ListElement[] | undefined {
  if (options === false || !isListWorthSplitting(serialized, options)) return undefined;
  const elements = listElements(serialized.bytes, 1);
  if (!elements || elements.length === 0) return undefined;
  const average = (serialized.bytes.length - 2) / elements.length;
  return average >= options.minElementBytes ? elements : undefined;
}

function decodeRanges(bytes: Uint8Array, ranges: readonly ByteRange[]): ListElement[] | undefined {
  const elements: ListElement[] = [];
  for (const [start, end] of ranges) {
    const slice = bytes.subarray(start, end);
    let body: string;
    try {
      body = strictUtf8.decode(slice);
    } catch {
      return undefined;
    }
    // PostgreSQL text cannot hold NUL; JSON escapes it, but a custom serde might not.
    if (body.includes('\u0000')) return undefined;
    elements.push({ digest: elementDigest(slice), body });
  }
  return elements;
}
