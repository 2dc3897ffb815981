import { Socket } from 'node:net';
import { ERROR_CODES, VeridexError, type VeridexErrorCode } from '../errors/index.js';
import type { JailedFs } from '../tools/types.js';
import type { ChildError } from './child-protocol.js';
import { encodeFrame, FrameReader, type FsReply, type FsRequest } from './fs-channel.js';
import { reportFsViolation } from './jailed-fs.js';
import { jailComponents } from './safe-resolve.js';
import type { SandboxViolation } from './sandbox.js';

/**
 * The jailed fs of a LocalProcessSandbox child: every operation is performed by the parent
 * (`serveJailedFs`), which walks paths race-free; this side only sends requests over the
 * channel on `fd` and turns the answers back into results and errors. The channel holds the
 * child's event loop open only while a request is in flight.
 */
export function remoteJailedFs(
  root: string,
  fd: number,
  report: (violation: SandboxViolation) => void,
): JailedFs {
  const pending = new Map<number, { resolve(reply: FsReply): void; reject(error: Error): void }>();
  const reader = new FrameReader();
  let socket: Socket | undefined;
  let next = 1;
  let broken: Error | undefined;

  const fail = (error: Error) => {
    broken ??= error;
    for (const waiting of pending.values()) waiting.reject(broken);
    pending.clear();
  };
  const open = (): Socket => {
    if (socket) return socket;
    const opened = new Socket({ fd, readable: true, writable: true });
    opened.unref();
    opened.on('data', (chunk: Buffer) => {
      let frames: unknown[];
      try {
        frames = reader.push(chunk);
      } catch (error) {
        opened.destroy();
        fail(error as Error);
        return;
      }
      for (const frame of frames) {
        const reply = frame as FsReply;
        const waiting = pending.get(reply.id);
        pending.delete(reply.id);
        if (pending.size === 0) opened.unref();
        waiting?.resolve(reply);
      }
    });
    opened.on('error', (error) => fail(error));
    opened.on('close', () => fail(new Error('the jailed fs channel to the parent closed')));
    socket = opened;
    return opened;
  };
  const call = (request: Omit<FsRequest, 'id'>): Promise<FsReply & { ok: true }> => {
    // What is not even a path is refused here (the parent checks every path again).
    try {
      jailComponents(request.path);
    } catch (error) {
      reportFsViolation(error, report);
      return Promise.reject(error);
    }
    if (broken) return Promise.reject(broken);
    const id = next++;
    return new Promise((resolve, reject) => {
      pending.set(id, {
        resolve: (reply) => (reply.ok ? resolve(reply) : reject(toError(reply.error))),
        reject,
      });
      const channel = open();
      channel.ref();
      channel.write(encodeFrame({ id, ...request }));
    });
  };

  return Object.freeze({
    root,
    async readFile(path: string): Promise<Buffer> {
      const reply = await call({ op: 'readFile', path });
      return Buffer.from(reply.data ?? '', 'base64');
    },
    async readText(path: string): Promise<string> {
      return (await this.readFile(path)).toString('utf8');
    },
    async writeFile(path: string, data: string | Uint8Array): Promise<void> {
      const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data);
      await call({ op: 'writeFile', path, data: bytes.toString('base64') });
    },
    async list(path = '.'): Promise<string[]> {
      return (await call({ op: 'list', path })).names ?? [];
    },
    async remove(path: string): Promise<void> {
      await call({ op: 'remove', path });
    },
  });
}

function toError(error: ChildError): Error {
  if (error.name === 'VeridexError' && (ERROR_CODES as readonly string[]).includes(error.code!)) {
    return new VeridexError(error.code as VeridexErrorCode, error.message, {
      details: error.details ?? {},
    });
  }
  const result = new Error(error.message) as Error & { code?: string };
  result.name = error.name;
  if (error.code !== undefined) result.code = error.code;
  return result;
}
