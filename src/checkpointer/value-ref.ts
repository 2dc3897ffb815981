import { VeridexError } from '../errors/index.js';

/** The serialised value is the payload. */
export const REF_INLINE = 1;
/** The payload is a sequence id (int64) and a length (int32), big-endian. */
export const REF_SEQUENCE = 2;
/** The payload is the SHA-256 key of a row in `veridex_checkpoint_blobs`. */
export const REF_BLOB = 3;

/** A value reference before encoding (the format is described in the 0002 migration). */
export type ValueRef =
  | { kind: typeof REF_INLINE; type: string; bytes: Uint8Array }
  | { kind: typeof REF_SEQUENCE; type: string; sequenceId: string; length: number }
  | { kind: typeof REF_BLOB; type: string; digest: Buffer };

/** Serialised values up to this size live inside the checkpoint row. */
export const INLINE_MAX_BYTES = 64;

/** Encodes a reference: kind, type length, type, payload. */
export function encodeRef(ref: ValueRef): Buffer {
  const type = Buffer.from(ref.type, 'utf8');
  if (type.length > 255) {
    throw new VeridexError(
      'checkpoint_invalid',
      `The serde returned a type name of ${type.length} bytes; at most 255 can be stored.`,
    );
  }
  let payload: Uint8Array;
  if (ref.kind === REF_INLINE) payload = ref.bytes;
  else if (ref.kind === REF_BLOB) payload = ref.digest;
  else {
    const buffer = Buffer.alloc(12);
    buffer.writeBigInt64BE(BigInt(ref.sequenceId), 0);
    buffer.writeInt32BE(ref.length, 8);
    payload = buffer;
  }
  return Buffer.concat([Buffer.from([ref.kind, type.length]), type, payload]);
}
