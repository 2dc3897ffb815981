import type { ChildError } from './child-protocol.js';

// The jailed fs of a LocalProcessSandbox child is served by its parent over a socket: the
// child runs under Node's permission model, which checks path strings and so refuses the
// `/proc/self/fd` paths a race-free walk needs; the parent has no such limit. This module is
// the wire format both sides share: frames of a 4-byte big-endian length and UTF-8 JSON.

/** The child's file descriptor of the channel (stdin, stdout, stderr, result, then this). */
export const FS_CHANNEL_FD = 4;

/**
 * Largest frame either side accepts (a file's bytes travel base64-encoded inside one): a file
 * larger than about three quarters of it cannot be read or written through the channel.
 */
export const MAX_FS_FRAME_BYTES = 64 * 1024 * 1024;

/** Largest file, in bytes, that fits in one frame once base64-encoded. */
export const MAX_FS_FILE_BYTES = Math.floor(((MAX_FS_FRAME_BYTES - 1024) / 4) * 3);

/** One operation the child asks for. */
export interface FsRequest {
  id: number;
  op: 'readFile' | 'writeFile' | 'list' | 'remove';
  path: string;
  /** The bytes to write, base64 (`writeFile` only). */
  data?: string;
}

/** The parent's answer to the request with the same `id`. */
export type FsReply =
  | { id: number; ok: true; data?: string; names?: string[] }
  | { id: number; ok: false; error: ChildError };

/** `message` as one frame. */
export function encodeFrame(message: FsRequest | FsReply): Buffer {
  const body = Buffer.from(JSON.stringify(message), 'utf8');
  const frame = Buffer.allocUnsafe(4 + body.length);
  frame.writeUInt32BE(body.length, 0);
  body.copy(frame, 4);
  return frame;
}

/**
 * Splits a byte stream into frames. Linear: every byte is copied once into the buffer of the
 * frame it belongs to.
 */
export class FrameReader {
  readonly #maxBytes: number;
  #pending: Buffer[] = [];
  #pendingBytes = 0;

  constructor(maxBytes = MAX_FS_FRAME_BYTES) {
    this.#maxBytes = maxBytes;
  }

  /**
   * The frames `chunk` completes, parsed.
   * @throws Error when a frame announces more than the maximum or is not JSON: the stream is
   * not to be trusted any further.
   */
  push(chunk: Buffer): unknown[] {
    this.#pending.push(chunk);
    this.#pendingBytes += chunk.length;
    const frames: unknown[] = [];
    while (this.#pendingBytes >= 4) {
      const head = this.#peek(4);
      const length = head.readUInt32BE(0);
      if (length > this.#maxBytes) {
        throw new Error(`a frame of ${length} bytes exceeds the ${this.#maxBytes}-byte limit`);
      }
      if (this.#pendingBytes < 4 + length) break;
      const frame = this.#take(4 + length);
      frames.push(JSON.parse(frame.toString('utf8', 4)));
    }
    return frames;
  }

  #peek(bytes: number): Buffer {
    if (this.#pending[0]!.length < bytes) this.#pending = [Buffer.concat(this.#pending)];
    return this.#pending[0]!;
  }

  #take(bytes: number): Buffer {
    const joined = this.#pending.length === 1 ? this.#pending[0]! : Buffer.concat(this.#pending);
    this.#pending = joined.length > bytes ? [joined.subarray(bytes)] : [];
    this.#pendingBytes -= bytes;
    return joined.subarray(0, bytes);
  }
}
