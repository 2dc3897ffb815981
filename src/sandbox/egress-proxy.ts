import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { VeridexError } from '../errors/index.js';
import { createAllowlistedHttpClient } from './allowlisted-http-client.js';
import { REFUSAL_HEADER, UPSTREAM_ERROR_HEADER } from './egress-fetch.js';
import { egressRequestBody } from './egress-request-body.js';
import { RequestSlots } from './request-slots.js';
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
  /** Upstream requests in flight at once, whatever the connections carry (default 16). */
  maxRequests?: number;
}

/** A connection of the child: its requests are served one at a time, in order. */
interface Connection {
  /** Settles when the last request admitted on this connection is over. */
  turn: Promise<void>;
  /** Requests admitted and not over yet: the one being served, and at most one waiting. */
  outstanding: number;
}

/** What a call hands the proxy: where refusals go, and the call's own end. */
interface ProxyCall {
  report: (violation: SandboxViolation) => void;
  signal?: AbortSignal;
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
 * The proxy spends the parent's memory and connections, so it is bounded like a sandbox limit.
 * The target is checked before any body byte is read; a declared body over `maxRequestBytes`
 * is refused unread; admitted bodies are streamed upstream as the upstream takes them (a slow
 * or stalled upstream stops reading from the child, never buffers for it). At most
 * `maxConnections` connections are open at once, each serves one request at a time (a
 * pipelined request waits for the one before it; a connection that sends another while one is
 * served and one waits is closed, reported), and at most `maxRequests` upstream requests are
 * in flight, whatever the child sends. Every upstream request belongs to its exchange: it is aborted, its body cancelled,
 * when the child's connection closes, when the call ends and when the proxy closes. What one
 * sandbox can make the parent hold is therefore about `maxConnections` × (socket and stream
 * buffers, ~80 KiB) plus `maxRequests` upstream connections, and no request once its call is
 * over; a connection a completed request leaves idle stays in the fetch's pool until its
 * keep-alive timeout (the agent's own, reusable by it).
 */
export class EgressProxy {
  readonly #server: Server;
  readonly #options: EgressProxyOptions;
  readonly #connections = new Map<Socket, Connection>();
  /** One controller per upstream exchange not over yet. */
  readonly #exchanges = new Set<AbortController>();
  readonly #slots: RequestSlots;
  #closed = false;
  #call: ProxyCall = { report: () => undefined };

  private constructor(server: Server, options: EgressProxyOptions) {
    this.#server = server;
    this.#options = options;
    this.#slots = new RequestSlots(options.maxRequests ?? 16);
  }

  /**
   * Listens on `path` (a new Unix socket). The socket exists when this returns (Node binds
   * Unix sockets synchronously), so a sandbox can bind-mount it right away.
   */
  static listen(path: string, options: EgressProxyOptions): EgressProxy {
    const server = createServer();
    server.maxConnections = options.maxConnections ?? 16;
    const proxy = new EgressProxy(server, options);
    server.on('drop', () =>
      proxy.#refuse('egress proxy', `more than ${server.maxConnections} connections at once`),
    );
    server.on('request', (request, response) => proxy.#admit(request, response));
    server.on('connect', (_request, socket: Socket) => {
      proxy.#refuse('CONNECT', 'CONNECT tunnels are not offered; send absolute-form requests');
      socket.end(`HTTP/1.1 405 Method Not Allowed\r\n${REFUSAL_HEADER}: connect\r\n\r\n`);
    });
    server.on('connection', (socket: Socket) => {
      proxy.#connections.set(socket, { turn: Promise.resolve(), outstanding: 0 });
      socket.on('close', () => proxy.#connections.delete(socket));
    });
    // A failed listen leaves the child without a proxy: its requests fail, nothing else opens.
    server.on('error', () => undefined);
    server.listen(path);
    server.unref();
    return proxy;
  }

  /** Routes refusals (and the abort signal) to the call now using this proxy. */
  attach(call: ProxyCall): void {
    this.#call = call;
  }

  /** Upstream requests in flight now (admitted, not over). */
  get inFlight(): number {
    return this.#exchanges.size;
  }

  /** Stops listening, drops every open connection and aborts every upstream request. */
  close(): void {
    this.#closed = true;
    this.#server.close();
    for (const socket of this.#connections.keys()) socket.destroy();
    for (const exchange of this.#exchanges) exchange.abort(new Error('the egress proxy closed'));
  }

  #refuse(target: string, reason: string): void {
    this.#call.report({ capability: 'http', target, reason });
  }

  /**
   * Node's server parses every request a connection pipelines at once; the proxy serves them
   * one at a time, and closes a connection that has one request served and another waiting
   * (a client waits for each response before it sends the next; one waiting request tolerates
   * a next one read before the last response's write was seen to complete).
   */
  #admit(request: IncomingMessage, response: ServerResponse): void {
    const socket = request.socket;
    const connection = this.#connections.get(socket);
    if (this.#closed || connection === undefined || socket.destroyed) return void socket.destroy();
    if (connection.outstanding >= 2) {
      this.#refuse('egress proxy', 'pipelined requests are not served: send one at a time');
      return void socket.destroy();
    }
    connection.outstanding++;
    const over = () => {
      connection.outstanding--;
    };
    connection.turn = connection.turn
      .then(() => this.#exchange(request, response))
      .then(over, over);
  }

  /** One request, from the child's request to the end of the upstream body or its abort. */
  async #exchange(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const socket = request.socket;
    if (this.#closed || socket.destroyed) return void response.destroy();
    const exchange = new AbortController();
    const end = () => exchange.abort(new Error('the exchange ended'));
    const callSignal = this.#call.signal;
    socket.once('close', end);
    callSignal?.addEventListener('abort', end, { once: true });
    if (callSignal?.aborted) end();
    this.#exchanges.add(exchange);
    try {
      await this.#forward(request, response, exchange.signal);
    } finally {
      // Whatever is still open upstream ends with its exchange (a no-op once it is complete).
      end();
      socket.off('close', end);
      callSignal?.removeEventListener('abort', end);
      this.#exchanges.delete(exchange);
    }
  }

  async #forward(request: IncomingMessage, response: ServerResponse, signal: AbortSignal) {
    const options = this.#options;
    const target = request.url ?? '';
    if (!/^https?:\/\//i.test(target)) {
      this.#refuse(target.slice(0, 200), 'the egress proxy takes absolute http(s) URLs only');
      return answer(response, 400, { [REFUSAL_HEADER]: 'not an absolute URL' });
    }
    const limit = options.maxRequestBytes ?? 8 * 1024 * 1024;
    const body = egressRequestBody(request, limit);
    if (body === 'too large' || body === 'not allowed') {
      const reason =
        body === 'too large'
          ? `Request body larger than ${limit} bytes`
          : `A ${request.method} request cannot carry a body`;
      this.#refuse(target.slice(0, 200), reason);
      return answer(response, 403, { [REFUSAL_HEADER]: encodeURIComponent(reason) });
    }
    let release: (() => void) | undefined;
    try {
      release = await this.#slots.acquire(signal);
      const client = createAllowlistedHttpClient({
        allowlists: options.allowlists,
        allowHttp: options.allowHttp,
        report: (violation) => this.#call.report(violation),
        ...(options.fetch ? { fetch: options.fetch } : {}),
      });
      // The client checks the target before it calls fetch, so a refused request leaves its
      // body unread; an admitted one is pulled by fetch only as fast as the upstream takes it.
      const upstream = await client.fetch(target, {
        method: request.method ?? 'GET',
        headers: forwardedHeaders(request),
        redirect: 'manual',
        signal,
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
      if (upstream.body === null) return void response.end();
      // A child that stops reading stops the upstream body; one that hangs up cancels it.
      await pipeline(
        Readable.fromWeb(upstream.body as import('node:stream/web').ReadableStream),
        response,
      );
    } catch (error) {
      if (signal.aborted) return void response.destroy();
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
    } finally {
      release?.();
    }
  }
}

/**
 * The child's headers as the upstream gets them: hop-by-hop and our own dropped. (Not
 * `connection: close`, which would keep no idle connection in the fetch's pool: undici 7 — the
 * global fetch of Node 24 — throws an uncatchable assertion when an upstream closes while a slow
 * reader holds the body back, nodejs/undici#5360, and a hostile child can be that reader.)
 */
function forwardedHeaders(request: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (DROPPED_REQUEST.has(name) || name.startsWith('x-veridex-') || value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  return headers;
}

function answer(response: ServerResponse, status: number, headers: Record<string, string>): void {
  if (response.headersSent) return void response.destroy();
  // A refused request's body is never read: close the connection rather than drain it.
  response.writeHead(status, { ...headers, connection: 'close' }).end();
  response.on('finish', () => response.socket?.destroy());
}
