import { describe, expect, it } from 'vitest';
import {
  createAllowlistedHttpClient,
  hostMatches,
  isPrivateAddress,
  type SandboxViolation,
} from '../../src/sandbox/index.js';

/** A fake network: answers per URL, records what was fetched. */
function fakeNetwork(routes: Record<string, { status: number; location?: string; body?: string }>) {
  const requests: Array<{ url: string; headers: Headers; method: string }> = [];
  const fetcher = (async (input: string | URL, init: RequestInit = {}) => {
    const url = String(input);
    requests.push({ url, headers: new Headers(init.headers), method: init.method ?? 'GET' });
    const route = routes[url] ?? { status: 404 };
    const headers = route.location ? { location: route.location } : undefined;
    return new Response(route.body ?? null, {
      status: route.status,
      ...(headers ? { headers } : {}),
    });
  }) as typeof fetch;
  return { fetcher, requests };
}

function client(
  allowlists: string[][],
  routes: Parameters<typeof fakeNetwork>[0] = {},
  allowHttp = false,
) {
  const violations: SandboxViolation[] = [];
  const network = fakeNetwork(routes);
  const http = createAllowlistedHttpClient({
    allowlists,
    fetch: network.fetcher,
    allowHttp,
    report: (v) => violations.push(v),
  });
  return { http, violations, requests: network.requests };
}

describe('hostMatches and isPrivateAddress', () => {
  it('matches exact hosts and *.domain wildcards (not the apex, not IP literals)', () => {
    expect(hostMatches('api.example.com', ['api.example.com'])).toBe(true);
    expect(hostMatches('API.Example.com.', ['api.example.com'])).toBe(true);
    expect(hostMatches('a.b.example.com', ['*.example.com'])).toBe(true);
    expect(hostMatches('example.com', ['*.example.com'])).toBe(false);
    expect(hostMatches('evilexample.com', ['*.example.com'])).toBe(false);
    expect(hostMatches('example.com.evil.io', ['*.example.com'])).toBe(false);
    expect(hostMatches('[::1]', ['::1'])).toBe(true);
  });

  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '[::1]',
    'fe80::1',
    'fd00::1',
    '::ffff:127.0.0.1',
    '::ffff:a9fe:a9fe',
    'localhost',
    'db.localhost',
  ])('treats %s as private', (host) => expect(isPrivateAddress(host)).toBe(true));

  it.each(['8.8.8.8', '172.32.0.1', '2606:4700::1111', 'example.com'])(
    'treats %s as public',
    (host) => expect(isPrivateAddress(host)).toBe(false),
  );
});

describe('createAllowlistedHttpClient', () => {
  it('fetches an allowlisted https URL', async () => {
    const { http, requests } = client([['api.example.com']], {
      'https://api.example.com/v1': { status: 200, body: 'ok' },
    });
    const response = await http.fetch('https://api.example.com/v1');
    expect(await response.text()).toBe('ok');
    expect(requests.map((r) => r.url)).toEqual(['https://api.example.com/v1']);
  });

  it.each([
    ['https://evil.example.net/x', /not on the network allowlist/],
    ['http://api.example.com/x', /only https/],
    ['ftp://api.example.com/x', /only https/],
    ['https://user:pw@api.example.com/', /credentials in URLs/],
    ['not a url', /not an absolute URL/],
  ])('refuses %s with sandbox_violation and reports it', async (url, reason) => {
    const { http, violations, requests } = client([['api.example.com']]);
    await expect(http.fetch(url)).rejects.toMatchObject({
      code: 'sandbox_violation',
      message: expect.stringMatching(reason),
    });
    expect(violations).toHaveLength(1);
    expect(violations[0]!.capability).toBe('http');
    expect(requests).toEqual([]);
  });

  it('requires a host to pass every allowlist (tool declaration and operator)', async () => {
    const { http } = client([['*.example.com'], ['api.example.com']], {
      'https://api.example.com/': { status: 200 },
    });
    await expect(http.fetch('https://api.example.com/')).resolves.toBeInstanceOf(Response);
    await expect(http.fetch('https://www.example.com/')).rejects.toMatchObject({
      code: 'sandbox_violation',
    });
  });

  it('refuses literal private and loopback addresses unless an allowlist names them exactly', async () => {
    const refused = client([['*.example.com']]);
    await expect(
      refused.http.fetch('https://169.254.169.254/latest/meta-data'),
    ).rejects.toMatchObject({ code: 'sandbox_violation' });
    const allowed = client(
      [['127.0.0.1']],
      { 'http://127.0.0.1:8080/health': { status: 200 } },
      true,
    );
    await expect(allowed.http.fetch('http://127.0.0.1:8080/health')).resolves.toBeInstanceOf(
      Response,
    );
  });

  it('follows redirects within the allowlist and refuses one that leaves it', async () => {
    const { http, requests, violations } = client([['api.example.com', 'cdn.example.com']], {
      'https://api.example.com/a': { status: 302, location: 'https://cdn.example.com/b' },
      'https://cdn.example.com/b': { status: 301, location: 'https://attacker.io/steal' },
    });
    await expect(
      http.fetch('https://api.example.com/a', { headers: { authorization: 'Bearer t' } }),
    ).rejects.toMatchObject({
      code: 'sandbox_violation',
      message: expect.stringMatching(/attacker\.io.*redirected from cdn\.example\.com/),
    });
    expect(requests.map((r) => r.url)).toEqual([
      'https://api.example.com/a',
      'https://cdn.example.com/b',
    ]);
    expect(requests[1]!.headers.get('authorization')).toBeNull();
    expect(violations).toHaveLength(1);
  });

  it('refuses a redirect to a private address (SSRF through an allowlisted host)', async () => {
    const { http } = client([['api.example.com']], {
      'https://api.example.com/a': { status: 307, location: 'https://127.0.0.1/admin' },
    });
    await expect(http.fetch('https://api.example.com/a')).rejects.toMatchObject({
      code: 'sandbox_violation',
    });
  });

  it('stops after too many redirects', async () => {
    const { http } = client([['api.example.com']], {
      'https://api.example.com/loop': { status: 302, location: '/loop' },
    });
    await expect(http.fetch('https://api.example.com/loop')).rejects.toMatchObject({
      message: expect.stringMatching(/Too many redirects/),
    });
  });
});
