// IsolatedProcessSandbox's only way out: the egress proxy in the parent, tried against a real
// HTTPS server on 127.0.0.1 — by the injected client and by a child that bypasses it.
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/index.js';
import { IsolatedProcessSandbox } from '../../src/sandbox/index.js';
import { executeTool } from '../../src/tools/execute-tool.js';
import type { AnyGovernedTool } from '../../src/tools/index.js';
import { describeIsolated } from '../support/isolation.js';
import { startTlsServer, type TlsServer } from '../support/tls-server.js';
import * as hostile from './fixtures/hostile-tools.js';
import * as probes from './fixtures/resource-tools.js';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'veridex-egress-test-')));
const jail = join(base, 'jail');
mkdirSync(jail);
chmodSync(base, 0o711); // a root agent's sandbox user must reach the jail
afterAll(() => rmSync(base, { recursive: true, force: true }));

async function call(box: IsolatedProcessSandbox, subject: AnyGovernedTool, arg: unknown) {
  const audit = new AuditLog();
  const result = await executeTool(
    subject,
    { arg: typeof arg === 'string' ? arg : JSON.stringify(arg) },
    { sandbox: box, audit, threadId: 't', toolCallId: 'c' },
  );
  const events = await audit.events('t');
  return { result, security: events.filter((event) => event.type === 'security_event') };
}

function answer(result: unknown): string {
  expect(result).toMatchObject({ status: 'success' });
  return (result as { output: { result: string } }).output.result;
}

describeIsolated('IsolatedProcessSandbox egress', () => {
  let server: TlsServer;
  let box: IsolatedProcessSandbox;
  beforeAll(async () => {
    server = await startTlsServer((request, response) => {
      if (request.url === '/echo-length') {
        let length = 0;
        request.on('data', (chunk: Buffer) => {
          length += chunk.length;
        });
        request.on('end', () => response.end(`got ${length}`));
      } else if (request.url === '/redirect') {
        response.writeHead(302, { location: `https://127.0.0.2:${server.port}/elsewhere` }).end();
      } else {
        response.end('pong');
      }
    });
    box = new IsolatedProcessSandbox({ jailRoot: jail, fetch: server.fetch });
  });
  afterAll(async () => {
    box.close();
    await server.close();
  });

  it('reaches an allowlisted https host through the proxy in the parent', async () => {
    const { result } = await call(box, hostile.allowedFetch, `${server.origin}/hello`);
    expect(result).toMatchObject({ status: 'success', output: { result: 'pong' } });
    expect(server.requests).toContain('/hello');
  });

  it('refuses a host off the allowlist, and a redirect to one, in the child and again in the proxy', async () => {
    const seen = server.requests.length;
    expect(
      (await call(box, hostile.allowedFetch, `https://localhost:${server.port}/x`)).result,
    ).toMatchObject({
      code: 'sandbox_violation',
    });
    expect(
      (await call(box, hostile.allowedFetch, `${server.origin}/redirect`)).result,
    ).toMatchObject({
      code: 'sandbox_violation',
    });
    expect(server.requests.slice(seen)).toEqual(['/redirect']);
  });

  it('records what a child that bypasses its client asks the proxy for, and refuses it', async () => {
    const direct = async (method: string, path: string) => {
      const { result, security } = await call(box, hostile.proxyDirect, { method, path });
      return { answer: JSON.parse(answer(result)), security };
    };
    const offList = await direct('GET', `https://127.0.0.2:${server.port}/`);
    expect(offList.answer).toMatchObject({
      status: 403,
      refusal: expect.stringMatching(/not on the network allowlist/),
    });
    expect(offList.security[0]!.payload).toMatchObject({
      violations: [
        expect.objectContaining({
          capability: 'http',
          target: expect.stringMatching(/127\.0\.0\.2/),
        }),
      ],
    });
    const plain = await direct('GET', `http://127.0.0.1:${server.port}/`);
    expect(plain.answer).toMatchObject({
      status: 403,
      refusal: expect.stringMatching(/only https/),
    });
    expect((await direct('CONNECT', `example.com:443`)).answer).toMatchObject({ status: 405 });
    expect((await direct('GET', '/relative')).answer).toMatchObject({ status: 400 });
    expect(server.requests).not.toContain('/relative');
  });

  it('with prewarm, each call gets a fresh sandbox with its own proxy', async () => {
    const warm = new IsolatedProcessSandbox({ jailRoot: jail, fetch: server.fetch, prewarm: true });
    try {
      for (let round = 0; round < 3; round++) {
        const { result } = await call(warm, hostile.allowedFetch, `${server.origin}/warm-${round}`);
        expect(result).toMatchObject({ output: { result: 'pong' } });
      }
      expect(server.requests).toEqual(expect.arrayContaining(['/warm-0', '/warm-1', '/warm-2']));
    } finally {
      warm.close();
    }
  });

  it('gives a tool that declares no allowlist no proxy at all', async () => {
    const { result } = await call(box, hostile.proxyUndeclared, {
      method: 'GET',
      path: `${server.origin}/`,
    });
    expect(result).toMatchObject({ status: 'error', message: expect.stringMatching(/ENOENT/) });
  });

  it('streams an admitted request body to the upstream', async () => {
    const { result } = await call(box, probes.egressPost, {
      url: `${server.origin}/echo-length`,
      bytes: 3 * 1024 * 1024,
    });
    expect(answer(result)).toBe(`200:got ${3 * 1024 * 1024}`);
  });

  it('refuses a request to a host off the allowlist before reading any of its body', async () => {
    // The child sends only the head of a POST that declares a body: the refusal cannot wait for it.
    const { result, security } = await call(box, probes.egressHeadOnly, {
      target: `https://127.0.0.2:${server.port}/upload`,
      waitMs: 20_000,
    });
    expect(answer(result)).toMatch(/^HTTP\/1\.1 403/);
    expect(JSON.stringify(security)).toContain('127.0.0.2');
  }, 60_000);

  it('holds no memory for a flood of half-sent bodies, and refuses connections beyond its cap', async () => {
    // The worst upstream: it never reads what it is sent. 48 connections each declare 8 MiB
    // and send all but one byte; an eager proxy would hold 384 MiB of them.
    const stalled = new IsolatedProcessSandbox({
      jailRoot: jail,
      fetch: () => new Promise<Response>(() => undefined),
    });
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 10);
    let outcome: Awaited<ReturnType<typeof call>>;
    try {
      outcome = await call(stalled, probes.egressFlood, {
        connections: 48,
        target: `${server.origin}/upload`,
        stallMs: 500,
      });
    } finally {
      clearInterval(sampler);
      stalled.close();
    }
    const seen = JSON.parse(answer(outcome.result));
    expect(seen.answered, JSON.stringify(seen)).toBeUndefined();
    expect((seen.closed ?? 0) + (seen.refused ?? 0), JSON.stringify(seen)).toBeGreaterThanOrEqual(
      48 - 16,
    );
    expect(seen.takenMb, JSON.stringify(seen)).toBeLessThan(64);
    expect((peak - before) / (1024 * 1024)).toBeLessThan(32);
    expect(JSON.stringify(outcome.security)).toContain('connections at once');
  }, 120_000);
});
