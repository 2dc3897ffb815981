import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { VeridexError } from '../errors/index.js';

/** Header the egress proxy sets on a refusal (URI-encoded reason). */
export const REFUSAL_HEADER = 'x-veridex-refusal';
/** Header the egress proxy sets when the upstream request failed (URI-encoded message). */
export const UPSTREAM_ERROR_HEADER = 'x-veridex-upstream-error';
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * A `fetch` for a child with no network interface: every request goes, as an absolute-form
 * HTTP request, to the parent's egress proxy on the Unix socket `socketPath`, which applies the
 * allowlists and performs it. The allowlisted client wraps this, so each redirect hop comes
 * back here and is checked again by the proxy.
 *
 * Written on `node:http` rather than undici: a child is a fresh process per call, and loading
 * the undici package costs ~35 ms there (it cannot live in the startup snapshot, whose builder
 * refuses `node:http` on Node 20), while `node:http` and the global `Response` are built in.
 */
export function createEgressFetch(socketPath: string): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const request = new Request(input, init);
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    if (body !== undefined) headers['content-length'] = String(body.length);
    // Loaded on first use (a startup snapshot cannot hold node:http on Node 20), and without
    // import(), which a snapshot cannot hold either.
    const { request: send } = process.getBuiltinModule('node:http');
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const outgoing = send({
        socketPath,
        method: request.method,
        path: request.url,
        headers,
        ...(init?.signal ? { signal: init.signal } : {}),
      });
      outgoing.on('response', resolve);
      outgoing.on('error', reject);
      outgoing.end(body);
    });
    const refusal = response.headers[REFUSAL_HEADER];
    if (typeof refusal === 'string') {
      response.resume();
      const reason = decodeURIComponent(refusal);
      throw new VeridexError(
        'sandbox_violation',
        `HTTP request refused by the egress proxy: ${reason}.`,
        {
          details: { capability: 'http', target: new URL(request.url).host, reason },
        },
      );
    }
    const upstreamError = response.headers[UPSTREAM_ERROR_HEADER];
    if (typeof upstreamError === 'string') {
      response.resume();
      // What fetch does on a network error, so tools handle both sandboxes alike.
      throw new TypeError('fetch failed', { cause: new Error(decodeURIComponent(upstreamError)) });
    }
    const status = response.statusCode ?? 502;
    const responseHeaders = new Headers();
    for (let index = 0; index + 1 < response.rawHeaders.length; index += 2) {
      responseHeaders.append(response.rawHeaders[index]!, response.rawHeaders[index + 1]!);
    }
    const empty = NULL_BODY.has(status) || request.method === 'HEAD';
    if (empty) response.resume();
    const result = new Response(empty ? null : (Readable.toWeb(response) as ReadableStream), {
      status,
      statusText: response.statusMessage ?? '',
      headers: responseHeaders,
    });
    Object.defineProperty(result, 'url', { value: request.url });
    return result;
  }) as typeof fetch;
}
