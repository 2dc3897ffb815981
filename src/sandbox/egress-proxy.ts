import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import { VeridexError } from '../errors/index.js';
import { createAllowlistedHttpClient } from './allowlisted-http-client.js';
import { REFUSAL_HEADER, UPSTREAM_ERROR_HEADER } from './egress-fetch.js';
import type { SandboxViolation } from './sandbox.js';

/** Options for {@link EgressProxy.listen}. */
export interface EgressProxyOptions {
  /** Every list a host must be on (the tool's declared list, the operator's). */
  allowlists: readonly (readonly string[])[];
  allowHttp: boolean;
  /** The fetch that performs admitted requests (default `globalThis.fetch`). */
  fetch?: typeof fetch;
  /** Largest request body accepted, in bytes (default 8 MiB). */
  maxRequestBytes?: number;
  /** Connections open at once; the proxy closes those beyond it unanswered (default 16). */
  maxConnections?: number;
}

// Hop-by-hop and proxy headers, and those fetch computes itself, are not forwarded.
const DROPPED_REQUEST = new Set([
  'connection',
  'content-length',
  'host',
  'keep-alive',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);
// fetch has already decoded the body, so its encoding and length no longer describe it.
const DROPPED_RESPONSE = new Set([
  'connection',
  'content-encoding',
  'content-length',
  'keep-alive',
  'transfer-encoding',
]);

/**
 * The only way out of an `IsolatedProcessSandbox` child: an HTTP proxy in the parent, listening
 * on a Unix socket bind-mounted into the sandbox (which has no network interface). The child
 * sends absolute-form requests (`GET https://host/path`); each one is performed through
 * {@link createAllowlistedHttpClient} with the sandbox's allowlists — https only unless
 * `allowHttp`, every host on every list, literal private/loopback/link-local addresses only when
 * listed exactly — and redirects are returned to the child, whose next hop comes back here to
 * be checked again. `CONNECT` and anything that is not an absolute http(s) URL are refused.
 * Refusals are reported to the current call, whatever the child claims.
 *
 * The proxy spends the parent's memory, so it is bounded like a sandbox limit: the target is
 * checked before any body byte is read; a declared body over `maxRequestBytes` is refused
 * unread; admitted bodies are streamed upstream as the upstream takes them (a slow or stalled
 * upstream stops reading from the child, never buffers for it); and at most `maxConnections`
 * connections are open at once. What one sandbox can make the parent hold is therefore about
 * `maxConnections` × (socket and stream buffers, ~80 KiB), whatever it sends.
 */
export class EgressProxy {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #call: { report: (violation: SandboxViolation) => void; signal?: AbortSignal } = {
    report: () => undefined,
  };

  private constructor(server: Server) {
    this.#server = server;
  }

  /**
   * Listens on `path` (a new Unix socket). The socket exists when this returns (Node binds
   * Unix sockets synchronously), so a sandbox can bind-mount it right away.
   */
  static listen(path: string, options: EgressProxyOptions): EgressProxy {
    const server = createServer();
    server.maxConnections = options.maxConnections ?? 16;
    const proxy = new EgressProxy(server);
    server.on('drop', () =>
      proxy.#refuse('egress proxy', `more than ${server.maxConnections} connections at once`),
    );
    server.on('request', (request, response) => void proxy.#handle(request, response, options));
    server.on('connect', (_request, socket: Socket) => {
      proxy.#refuse('CONNECT', 'CONNECT tunnels are not offered; send absolute-form requests');
      socket.end(`HTTP/1.1 405 Method Not Allowed\r\n${REFUSAL_HEADER}: connect\r\n\r\n`);
    });
    server.on('connection', (socket: Socket) => {
      proxy.#sockets.add(socket);
      socket.on('close', () => proxy.#sockets.delete(socket));
    });
    // A failed listen leaves the child without a proxy: its requests fail, nothing else opens.
    server.on('error', () => undefined);
    server.listen(path);
    server.unref();
    return proxy;
  }

  /** Routes refusals (and the abort signal) to the call now using this proxy. */
  attach(call: { report: (violation: SandboxViolation) => void; signal?: AbortSignal }): void {
    this.#call = call;
  }

  /** Stops listening and drops every open connection. */
  close(): void {
    this.#server.close();
    for (const socket of this.#sockets) socket.destroy();
  }

  #refuse(target: string, reason: string): void {
    this.#call.report({ capability: 'http', target, reason });
  }

  async #handle(request: IncomingMessage, response: ServerResponse, options: EgressProxyOptions) {
    const target = request.url ?? '';
    if (!/^https?:\/\//i.test(target)) {
      this.#refuse(target.slice(0, 200), 'the egress proxy takes absolute http(s) URLs only');
      return answer(response, 400, { [REFUSAL_HEADER]: 'not an absolute URL' });
    }
    const limit = options.maxRequestBytes ?? 8 * 1024 * 1024;
    const body = requestBody(request, limit);
    if (body === 'too large' || body === 'not allowed') {
      const reason =
        body === 'too large'
          ? `Request body larger than ${limit} bytes`
          : `A ${request.method} request cannot carry a body`;
      this.#refuse(target.slice(0, 200), reason);
      return answer(response, 403, { [REFUSAL_HEADER]: encodeURIComponent(reason) });
    }
    try {
      const headers = new Headers();
      for (const [name, value] of Object.entries(request.headers)) {
        if (DROPPED_REQUEST.has(name) || name.startsWith('x-veridex-') || value === undefined)
          continue;
        for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
      }
      const client = createAllowlistedHttpClient({
        allowlists: options.allowlists,
        allowHttp: options.allowHttp,
        report: (violation) => this.#call.report(violation),
        ...(options.fetch ? { fetch: options.fetch } : {}),
        ...(this.#call.signal ? { signal: this.#call.signal } : {}),
      });
      // The client checks the target before it calls fetch, so a refused request leaves its
      // body unread; an admitted one is pulled by fetch only as fast as the upstream takes it.
      const upstream = await client.fetch(target, {
        method: request.method ?? 'GET',
        headers,
        redirect: 'manual',
        ...(body ? { body: body.stream, duplex: 'half' } : {}),
      } as RequestInit);
      const forwarded: Record<string, string[]> = {};
      upstream.headers.forEach((value, name) => {
        if (DROPPED_RESPONSE.has(name)) return;
        forwarded[name] = [...(forwarded[name] ?? []), value];
      });
      const cookies = upstream.headers.getSetCookie();
      if (cookies.length > 0) forwarded['set-cookie'] = cookies;
      response.writeHead(upstream.status, upstream.statusText, forwarded);
      if (upstream.body === null) return response.end();
      Readable.fromWeb(upstream.body as import('node:stream/web').ReadableStream)
        .on('error', () => response.destroy())
        .pipe(response);
    } catch (error) {
      if (body?.exceeded()) {
        const reason = `Request body larger than ${limit} bytes`;
        this.#refuse(target.slice(0, 200), reason);
        return answer(response, 403, { [REFUSAL_HEADER]: encodeURIComponent(reason) });
      }
      if (VeridexError.is(error, 'sandbox_violation')) {
        return answer(response, 403, { [REFUSAL_HEADER]: encodeURIComponent(error.message) });
      }
      const cause = (error as { cause?: { message?: string } }).cause?.message;
      const message = `${(error as Error).message}${cause ? `: ${cause}` : ''}`;
      return answer(response, 502, { [UPSTREAM_ERROR_HEADER]: encodeURIComponent(message) });
    }
  }
}

function answer(response: ServerResponse, status: number, headers: Record<string, string>): void {
  if (response.headersSent) return void response.destroy();
  // A refused request's body is never read: close the connection rather than drain it.
  response.writeHead(status, { ...headers, connection: 'close' }).end();
  response.on('finish', () => response.socket?.destroy());
}

/**
 * The request's body as a stream that reads from the child only when pulled, failing past
 * `limit` bytes; `undefined` when the request declares none. A declared length over the limit,
 * or a body on GET/HEAD, is refused without reading a byte.
 */
function requestBody(
  request: IncomingMessage,
  limit: number,
):
  | { stream: ReadableStream<Uint8Array>; exceeded: () => boolean }
  | 'too large'
  | 'not allowed'
  | undefined {
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
