import type { IncomingMessage } from 'node:http';

/** A request body read from the child only as fast as the upstream takes it. */
export interface EgressRequestBody {
  stream: ReadableStream<Uint8Array>;
  /** Whether more than the limit arrived (the stream then failed). */
  exceeded(): boolean;
}

/**
 * The request's body as a stream that reads from the child only when pulled, failing past
 * `limit` bytes; `undefined` when the request declares none. A declared length over the limit,
 * or a body on GET/HEAD, is refused without reading a byte.
 */
export function egressRequestBody(
  request: IncomingMessage,
  limit: number,
): EgressRequestBody | 'too large' | 'not allowed' | undefined {
  const declared = Number(request.headers['content-length'] ?? 0);
  const chunked = request.headers['transfer-encoding'] !== undefined;
  if (!chunked && !(declared > 0)) return undefined;
  if (declared > limit) return 'too large';
  if (request.method === 'GET' || request.method === 'HEAD') return 'not allowed';
  const chunks = (request as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  let size = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const next = await chunks.next();
        if (next.done) return controller.close();
        size += next.value.length;
        if (size > limit) {
          request.destroy();
          return controller.error(new Error(`request body larger than ${limit} bytes`));
        }
        controller.enqueue(new Uint8Array(next.value));
      },
      cancel() {
        request.destroy();
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, exceeded: () => size > limit };
}
