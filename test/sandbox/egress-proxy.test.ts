// The egress proxy on its own (no bubblewrap): what a child that talks to it directly can make
// it hold upstream. The upstream is a plain http server on 127.0.0.1 that counts the requests it
// holds open; the "child" is a raw Unix socket client.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { EgressProxy, type EgressProxyOptions } from '../../src/sandbox/egress-proxy.js';
import type { SandboxViolation } from '../../src/sandbox/index.js';

const directory = mkdtempSync(join(tmpdir(), 'veridex-egress-proxy-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
let sockets = 0;

/** An upstream that holds every response until `answerAll()`, or streams an endless body. */
interface Upstream {
  origin: string;
  open(): number;
  peak(): number;
  seen(): string[];
  answerAll(): void;
  close(): Promise<void>;
}

async function startUpstream(kind: 'held' | 'endless'): Promise<Upstream> {
  let open = 0;
  let peak = 0;
  const seen: string[] = [];
  const held: ServerResponse[] = [];
  const chunk = Buffer.alloc(16 * 1024, 0x61);
  const server: Server = createServer((request, response) => {
    open++;
    peak = Math.max(peak, open);
    seen.push(request.url ?? '');
    response.on('close', () => open--);
    request.resume();
    if (kind === 'held') return void held.push(response);
    response.writeHead(200);
    const pump = () => {
      while (!response.destroyed && response.write(chunk));
    };
    response.on('drain', pump);
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    open: () => open,
    peak: () => peak,
    seen: () => seen,
    answerAll: () => {
      for (const response of held.splice(0)) response.end('late');
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const running: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const item of running.splice(0).reverse()) await item.close();
});

function listen(options: Partial<EgressProxyOptions> = {}) {
  const path = join(directory, `egress-${++sockets}.sock`);
  const violations: SandboxViolation[] = [];
  const call = new AbortController();
  const proxy = EgressProxy.listen(path, {
    allowlists: [['127.0.0.1']],
    allowHttp: true,
    ...options,
  });
  proxy.attach({ report: (violation) => violations.push(violation), signal: call.signal });
  running.push(proxy);
  return { proxy, path, violations, call };
}

/** A raw connection to the proxy: what it wrote back, and whether it was closed. */
function connect(path: string, bytes: string) {
  const socket = net.connect(path);
  const state = { text: '', closed: false, socket };
  socket.on('connect', () => socket.write(bytes));
  socket.on('data', (chunk: Buffer) => {
    state.text += chunk.toString('latin1');
  });
  socket.on('error', () => undefined);
  socket.on('close', () => {
    state.closed = true;
  });
  running.push({ close: () => socket.destroy() });
  return state;
}

const get = (url: string) => `GET ${url} HTTP/1.1\r\nhost: x\r\n\r\n`;
const statuses = (text: string) => text.match(/HTTP\/1\.1 \d{3}/g) ?? [];

async function waitFor(condition: () => boolean, what: string, ms = 20_000): Promise<void> {
  for (let waited = 0; !condition(); waited += 20) {
    if (waited > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('EgressProxy', () => {
  it('serves two requests pipelined on one connection one after the other, in order', async () => {
    const upstream = await startUpstream('held');
    running.push(upstream);
    const { path } = listen();
    const client = connect(path, get(`${upstream.origin}/one`) + get(`${upstream.origin}/two`));
    await waitFor(() => upstream.seen().length === 1, 'the first request upstream');
    // The second waits for the first: it has not gone upstream while the first is open.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(upstream.seen()).toEqual(['/one']);
    upstream.answerAll();
    await waitFor(() => upstream.seen().length === 2, 'the second request upstream');
    upstream.answerAll();
    await waitFor(() => statuses(client.text).length === 2, 'both answers');
    expect(upstream.peak()).toBe(1);
  });

  it('closes a connection that pipelines a third request, reports it, and aborts the first', async () => {
    const upstream = await startUpstream('held');
    running.push(upstream);
    const { path, violations } = listen();
    const client = connect(path, get(`${upstream.origin}/pipelined`).repeat(500));
    await waitFor(() => client.closed, 'the connection closed');
    await waitFor(() => upstream.open() === 0, 'no upstream request open');
    expect(upstream.peak()).toBeLessThanOrEqual(1);
    expect(violations).toContainEqual(
      expect.objectContaining({
        target: 'egress proxy',
        reason: expect.stringMatching(/pipelined/),
      }),
    );
  });

  it('holds at most maxRequests upstream requests in flight, however many connections ask', async () => {
    const upstream = await startUpstream('held');
    running.push(upstream);
    const { path, proxy } = listen({ maxRequests: 3 });
    const clients = Array.from({ length: 10 }, (_, index) =>
      connect(path, get(`${upstream.origin}/c${index}`)),
    );
    // Every request has reached the proxy; three went upstream, the other seven wait for a slot.
    await waitFor(() => proxy.inFlight === 10 && upstream.open() === 3, 'ten requests admitted');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(upstream.open()).toBe(3);
    while (clients.some((client) => statuses(client.text).length === 0)) {
      upstream.answerAll();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(upstream.peak()).toBe(3);
    expect(upstream.seen()).toHaveLength(10);
  });

  it('aborts the upstream request when the child hangs up, before the answer or during the body', async () => {
    const held = await startUpstream('held');
    const endless = await startUpstream('endless');
    running.push(held, endless);
    const { path, proxy } = listen();
    const waiting = connect(path, get(`${held.origin}/slow`));
    const reading = connect(path, get(`${endless.origin}/download`));
    await waitFor(() => held.open() === 1 && reading.text.includes('\r\n\r\n'), 'both in flight');
    waiting.socket.destroy();
    reading.socket.destroy();
    await waitFor(() => held.open() === 0 && endless.open() === 0, 'no upstream request open');
    await waitFor(() => proxy.inFlight === 0, 'no exchange left in the proxy');
  });

  it('aborts every upstream request when the call ends, and when the proxy closes', async () => {
    const upstream = await startUpstream('endless');
    running.push(upstream);
    const first = listen();
    const second = listen();
    for (const { path } of [first, second]) {
      for (let index = 0; index < 3; index++) connect(path, get(`${upstream.origin}/d${index}`));
    }
    await waitFor(() => upstream.open() === 6, 'six downloads upstream');
    first.call.abort(new Error('the call timed out'));
    await waitFor(() => upstream.open() === 3, 'the first call’s downloads aborted');
    second.proxy.close();
    await waitFor(() => upstream.open() === 0, 'no upstream request open');
  });
});
