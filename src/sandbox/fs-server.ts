import type { Duplex } from 'node:stream';
import { VeridexError } from '../errors/index.js';
import type { ChildError } from './child-protocol.js';
import {
  encodeFrame,
  FrameReader,
  type FsReply,
  type FsRequest,
  MAX_FS_FILE_BYTES,
} from './fs-channel.js';
import { createJailedFs } from './jailed-fs.js';
import type { SandboxViolation } from './sandbox.js';

const OPERATIONS = new Set<FsRequest['op']>(['readFile', 'writeFile', 'list', 'remove']);
const MAX_PATH_LENGTH = 4_096;

/**
 * Serves the jailed fs of `root` to a child process over `channel` (see `fs-channel.ts`), from
 * this process: here paths are walked through `/proc/self/fd`, which a child under Node's
 * permission model cannot use, so a directory swapped for a symlink mid-walk is refused
 * however the swap is timed. Everything the child sends is untrusted: a request that is not
 * one of the four operations with a string path, or a frame over the limit, ends the channel
 * (the child's later calls fail). Refused paths are reported to `report`, here in the parent.
 * Requests are performed one at a time, and the channel is not read while one is pending or
 * its answer is not yet taken by the child: a child that floods requests, or never reads the
 * answers, holds at most one file's bytes in this process (the rest waits in the socket).
 * Returns the function that stops serving.
 */
export function serveJailedFs(
  channel: Duplex,
  root: string,
  report: (violation: SandboxViolation) => void,
): () => void {
  const fs = createJailedFs(root, report, { maxReadBytes: MAX_FS_FILE_BYTES });
  const reader = new FrameReader();
  const queue: FsRequest[] = [];
  let serving = false;
  const untrusted = (reason: string) => {
    report({ capability: 'fs', target: 'fs channel', reason });
    channel.destroy();
  };
  const serve = async () => {
    if (serving) return;
    serving = true;
    channel.pause();
    for (let request = queue.shift(); request && !channel.destroyed; request = queue.shift()) {
      const reply = await perform(fs, request);
      if (channel.destroyed) break;
      if (!channel.write(encodeFrame(reply))) await drained(channel);
    }
    queue.length = 0;
    serving = false;
    if (!channel.destroyed) channel.resume();
  };
  channel.on('data', (chunk: Buffer) => {
    let frames: unknown[];
    try {
      frames = reader.push(chunk);
    } catch (error) {
      untrusted(`unreadable request: ${(error as Error).message}`);
      return;
    }
    for (const frame of frames) {
      const request = asRequest(frame);
      if (!request) {
        untrusted('a malformed request');
        return;
      }
      queue.push(request);
    }
    void serve();
  });
  channel.on('error', () => undefined); // the child died or closed its end: nothing to answer
  return () => channel.destroy();
}

/** Resolves when `channel` can take more writes, or is closed. */
function drained(channel: Duplex): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      channel.off('drain', done);
      channel.off('close', done);
      resolve();
    };
    channel.on('drain', done);
    channel.on('close', done);
  });
}

async function perform(
  fs: ReturnType<typeof createJailedFs>,
  request: FsRequest,
): Promise<FsReply> {
  const { id, path } = request;
  try {
    switch (request.op) {
      case 'readFile':
        return { id, ok: true, data: (await fs.readFile(path)).toString('base64') };
      case 'writeFile':
        await fs.writeFile(path, Buffer.from(request.data ?? '', 'base64'));
        return { id, ok: true };
      case 'list':
        return { id, ok: true, names: await fs.list(path) };
      case 'remove':
        await fs.remove(path);
        return { id, ok: true };
    }
  } catch (error) {
    return { id, ok: false, error: asChildError(error) };
  }
}

function asRequest(frame: unknown): FsRequest | undefined {
  if (typeof frame !== 'object' || frame === null) return undefined;
  const { id, op, path, data } = frame as Record<string, unknown>;
  if (!Number.isSafeInteger(id) || !OPERATIONS.has(op as FsRequest['op'])) return undefined;
  if (typeof path !== 'string' || path.length > MAX_PATH_LENGTH) return undefined;
  if (data !== undefined && (op !== 'writeFile' || typeof data !== 'string')) return undefined;
  return {
    id: id as number,
    op: op as FsRequest['op'],
    path,
    ...(data !== undefined ? { data } : {}),
  };
}

// What the child rebuilds: a VeridexError with its code and scalar details, or an fs error
// with its errno code (a tool tells ENOENT from EISDIR as it would with node:fs).
function asChildError(error: unknown): ChildError {
  if (VeridexError.is(error)) {
    const details = Object.fromEntries(
      Object.entries(error.details).filter(
        ([, value]) => value === null || typeof value !== 'object',
      ),
    );
    return { name: 'VeridexError', code: error.code, message: error.message, details };
  }
  const code = (error as { code?: unknown }).code;
  return {
    name: error instanceof Error ? error.name : 'Error',
    message: error instanceof Error ? error.message : String(error),
    ...(typeof code === 'string' ? { code } : {}),
  };
}
