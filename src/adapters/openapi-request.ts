import { VeridexError } from '../errors/index.js';
import type { ToolSecrets } from '../tools/types.js';

/** How an imported API authenticates: always through a named secret, never through the model. */
export type OpenAPIAuth =
  | { type: 'bearer'; secret: string }
  | { type: 'header'; name: string; secret: string }
  | { type: 'query'; name: string; secret: string }
  | { type: 'basic'; username: string; secret: string };

/** Media types a request body is sent as. */
export type BodyEncoding = 'json' | 'form';

/** What a tool needs to call one operation. */
export interface OperationTarget {
  method: string;
  /** Server URL the path is appended to (no trailing slash). */
  baseUrl: string;
  /** Path template, e.g. `/tickets/{ticket_id}`. */
  path: string;
  body?: BodyEncoding;
  /** Header name for the idempotency key on non-safe methods (`undefined`: none sent). */
  idempotencyHeader?: string;
}

/** The input a tool built by `fromOpenAPI` receives, grouped by where each value goes. */
export interface OperationInput {
  path?: Record<string, unknown>;
  query?: Record<string, unknown>;
  headers?: Record<string, unknown>;
  body?: unknown;
}

/**
 * One path segment from a model-supplied value. `.` and `..` are refused: URL parsers resolve
 * them (even percent-encoded as `%2e`), which would turn `/tickets/{id}` into another endpoint.
 * Everything else is percent-encoded, so a value never adds a segment, a query or a fragment.
 *
 * @throws VeridexError `input_invalid` for `.`/`..` or an empty value.
 */
export function pathSegment(name: string, value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value ?? '');
  if (text === '' || text === '.' || text === '..') {
    throw new VeridexError(
      'input_invalid',
      `Path parameter "${name}" cannot be ${JSON.stringify(text)}.`,
    );
  }
  return encodeURIComponent(text);
}

/**
 * Builds the URL and `fetch` options of one call. Path parameters fill single segments; query
 * values are appended (arrays repeated, objects as JSON); headers are strings; the body is JSON
 * or form-encoded; the secret is added last, so no input can replace it.
 *
 * @throws VeridexError `input_invalid` for unusable path values.
 */
export function buildRequest(
  target: OperationTarget,
  input: OperationInput,
  options: {
    auth?: OpenAPIAuth;
    secrets: ToolSecrets;
    idempotencyKey: string;
    signal: AbortSignal;
  },
): { url: URL; init: RequestInit } {
  const path = target.path.replace(/\{([^{}]+)\}/g, (_whole, name: string) =>
    pathSegment(name, input.path?.[name]),
  );
  const url = new URL(`${target.baseUrl}${path}`);
  for (const [name, value] of Object.entries(input.query ?? {})) {
    if (value === undefined || value === null) continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      url.searchParams.append(name, scalar(item));
    }
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(input.headers ?? {})) {
    if (value !== undefined && value !== null) headers.set(name, scalar(value));
  }
  let body: string | undefined;
  if (target.body && input.body !== undefined) {
    if (target.body === 'json') {
      headers.set('content-type', 'application/json');
      body = JSON.stringify(input.body);
    } else {
      headers.set('content-type', 'application/x-www-form-urlencoded');
      body = new URLSearchParams(
        Object.entries(input.body as Record<string, unknown>).map(
          ([key, value]): [string, string] => [key, scalar(value)],
        ),
      ).toString();
    }
  }
  if (target.idempotencyHeader) headers.set(target.idempotencyHeader, options.idempotencyKey);
  headers.set('accept', 'application/json');
  if (options.auth) applyAuth(options.auth, options.secrets, url, headers);
  return {
    url,
    init: {
      method: target.method.toUpperCase(),
      headers,
      body: body ?? null,
      signal: options.signal,
    },
  };
}

function applyAuth(auth: OpenAPIAuth, secrets: ToolSecrets, url: URL, headers: Headers): void {
  const value = secrets.get(auth.secret).reveal();
  switch (auth.type) {
    case 'bearer':
      headers.set('authorization', `Bearer ${value}`);
      return;
    case 'header':
      headers.set(auth.name, value);
      return;
    case 'query':
      url.searchParams.set(auth.name, value);
      return;
    case 'basic':
      headers.set(
        'authorization',
        `Basic ${Buffer.from(`${auth.username}:${value}`).toString('base64')}`,
      );
  }
}

function scalar(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Header names an operation's input may never set (auth, framing, the idempotency key). */
export function reservedHeaders(
  auth: OpenAPIAuth | undefined,
  idempotencyHeader?: string,
): Set<string> {
  const names = [
    'authorization',
    'cookie',
    'host',
    'content-type',
    'content-length',
    'accept',
    'proxy-authorization',
  ];
  if (auth?.type === 'header') names.push(auth.name.toLowerCase());
  if (idempotencyHeader) names.push(idempotencyHeader.toLowerCase());
  return new Set(names);
}

/**
 * Reads at most `limit` bytes of a response body as text, cancelling the rest; a larger body
 * is cut with a `[truncated]` marker rather than buffered whole.
 */
export async function readCapped(response: Response, limit: number): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.byteLength > limit) {
      chunks.push(value.subarray(0, limit - size));
      truncated = true;
      await reader.cancel();
      break;
    }
    chunks.push(value);
    size += value.byteLength;
  }
  const text = Buffer.concat(chunks).toString('utf8');
  return truncated ? `${text}\n[truncated at ${limit} bytes]` : text;
}
