import { VeridexError } from '../errors/index.js';
import type { HttpClient } from '../tools/types.js';
import { hostMatches } from './host-pattern.js';
import { isPrivateAddress } from './private-address.js';
import type { SandboxViolation } from './sandbox.js';

/** Options for {@link createAllowlistedHttpClient}. */
export interface AllowlistedHttpOptions {
  /** Every allowlist a host must pass (e.g. the tool's declared list and the operator's). */
  allowlists: ReadonlyArray<readonly string[]>;
  /** Allow plain `http:` (default false: https only). */
  allowHttp?: boolean;
  /** Redirects followed, each re-checked against the allowlists (default 5). */
  maxRedirects?: number;
  /** The underlying fetch (default `globalThis.fetch`). */
  fetch?: typeof fetch;
  /** Default signal for requests that bring none (the tool call's). */
  signal?: AbortSignal;
  report(violation: SandboxViolation): void;
}

/**
 * An HTTP client that reaches only allowlisted hosts: every URL, and every redirect target,
 * must use https (unless `allowHttp`) and match every allowlist; a literal private, loopback
 * or link-local address passes only when an allowlist names it exactly. Redirects are followed
 * by hand so that a redirect off the allowlist is refused rather than silently followed;
 * `Authorization` and `Cookie` are dropped when a redirect changes origin.
 *
 * Host names are not resolved here: a name that resolves to a private address (DNS rebinding)
 * is not caught. Pair with network-level egress controls for hostile code.
 *
 * @example
 * const http = createAllowlistedHttpClient({ allowlists: [['api.example.com']], report: console.warn });
 * await http.fetch('https://api.example.com/v1/items');
 */
export function createAllowlistedHttpClient(options: AllowlistedHttpOptions): HttpClient {
  const underlying = options.fetch ?? globalThis.fetch;
  const maxRedirects = options.maxRedirects ?? 5;
  const check = (url: URL, via?: string): void => {
    const reason = refusal(url, options);
    if (reason === undefined) return;
    const target = `${url.protocol}//${url.host}${url.pathname}`;
    options.report({ capability: 'http', target, reason });
    throw new VeridexError(
      'sandbox_violation',
      `HTTP request to ${target}${via ? ` (redirected from ${via})` : ''} refused: ${reason}.`,
      { details: { capability: 'http', target, reason } },
    );
  };
  return Object.freeze({
    async fetch(input: string | URL, init: RequestInit = {}): Promise<Response> {
      let url = parseUrl(input, options.report);
      check(url);
      let request: RequestInit = {
        ...init,
        redirect: 'manual',
        signal: init.signal ?? options.signal ?? null,
      };
      for (let hop = 0; ; hop++) {
        const response = await underlying(url, request);
        const location = response.headers.get('location');
        if (response.status < 300 || response.status > 399 || location === null) return response;
        if (init.redirect === 'manual') return response;
        if (init.redirect === 'error' || hop >= maxRedirects) {
          throw new VeridexError(
            'sandbox_violation',
            `Too many redirects from ${url.host} (limit ${maxRedirects}).`,
            {
              details: { capability: 'http', target: url.host, reason: 'redirect limit' },
            },
          );
        }
        const next = new URL(location, url);
        check(next, url.host);
        request = redirected(request, response.status, url, next);
        url = next;
      }
    },
  });
}

function parseUrl(input: string | URL, report: AllowlistedHttpOptions['report']): URL {
  try {
    return new URL(String(input));
  } catch {
    const target = String(input).slice(0, 200);
    report({ capability: 'http', target, reason: 'not an absolute URL' });
    throw new VeridexError(
      'sandbox_violation',
      `HTTP request refused: ${JSON.stringify(target)} is not an absolute URL.`,
      {
        details: { capability: 'http', target, reason: 'invalid url' },
      },
    );
  }
}

function refusal(url: URL, options: AllowlistedHttpOptions): string | undefined {
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && options.allowHttp)) {
    return options.allowHttp ? 'only http and https are allowed' : 'only https is allowed';
  }
  if (url.username !== '' || url.password !== '') return 'credentials in URLs are not allowed';
  const host = url.hostname;
  for (const allowlist of options.allowlists) {
    if (!hostMatches(host, allowlist)) return `host ${host} is not on the network allowlist`;
    if (isPrivateAddress(host) && !allowlist.some((entry) => bare(entry) === bare(host))) {
      return `private or loopback address ${host} must be allowlisted exactly`;
    }
  }
  return undefined;
}

function bare(host: string): string {
  return host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
}

function redirected(request: RequestInit, status: number, from: URL, to: URL): RequestInit {
  const headers = new Headers(request.headers);
  if (from.origin !== to.origin) {
    headers.delete('authorization');
    headers.delete('cookie');
  }
  const method = (request.method ?? 'GET').toUpperCase();
  if (status === 303 || ((status === 301 || status === 302) && method === 'POST')) {
    headers.delete('content-type');
    headers.delete('content-length');
    return { ...request, method: method === 'HEAD' ? 'HEAD' : 'GET', body: null, headers };
  }
  return { ...request, headers };
}
