// Adversary 2 (a hostile tool author) against the parent's egress proxy. README "Sandboxes":
// "each sandbox's proxy holds at most 16 connections at once ... What one sandbox can make the
// parent hold is therefore about 16 × (socket and stream buffers, ~80 KiB), whatever it sends."
// The re-pass found the cap counted the child's connections to the proxy, not the proxy's
// requests upstream:
// - Node's HTTP server dispatches every pipelined request of one connection at once, so one
//   connection carrying N requests made the parent open N concurrent upstream requests;
// - when the child hung up, the upstream fetch was neither aborted nor its body cancelled, so
//   each connection the child opened and dropped left an upstream connection (a descriptor, its
//   stream buffers and kernel socket buffers, all in the parent) open after the call, after
//   close(), for as long as the upstream kept it open. Seen then: 400 hang-ups in one call left
//   400 upstream connections, +400 descriptors and +128 MB resident in the parent, and about
//   1.5 GB less available memory on the host, after the sandbox was closed.
// Both need only an allowlisted host that is slow to answer or serves a long body. Now each
// connection is served one request at a time, at most 16 upstream requests are in flight per
// proxy, and each is aborted with its connection, its call or its proxy (egress-proxy.ts).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, expect, it } from 'vitest';
import { IsolatedProcessSandbox } from '../../src/sandbox/index.js';
import { attackJail, runHostileTool } from '../support/attack-targets.js';
import { describeIsolated } from '../support/isolation.js';
import { hangUpAfterHead, pipelinedEgress } from './fixtures/repass-probe-tools.js';

const { base, jail } = attackJail('veridex-repass-egress-');
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** An allowlisted https upstream on 127.0.0.1 that counts the requests it holds open. */
interface Upstream {
  origin: string;
  fetch: typeof fetch;
  /** Requests whose response has not closed yet. */
  open(): number;
  /** The most requests open at once. */
  peak(): number;
  close(): Promise<void>;
}

async function startUpstream(kind: 'slow' | 'endless'): Promise<Upstream> {
  const directory = mkdtempSync(join(tmpdir(), 'veridex-repass-upstream-'));
  const key = join(directory, 'key.pem');
  const cert = join(directory, 'cert.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']
      .concat(['-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1'])
      .concat(['-addext', 'subjectAltName=IP:127.0.0.1']),
    { stdio: 'ignore' },
  );
  let open = 0;
  let peak = 0;
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const chunk = Buffer.alloc(16 * 1024, 0x61);
  const server: Server = createServer(
    { key: readFileSync(key), cert: readFileSync(cert) },
    (request, response) => {
      open++;
      peak = Math.max(peak, open);
      response.on('close', () => open--);
      request.resume();
      if (kind === 'slow') {
        // Answers after 3 s: long enough for every pipelined request to be in flight.
        const timer = setTimeout(() => response.end('late'), 3_000);
        timers.add(timer);
        return;
      }
      // A long download, written only as fast as the reader takes it.
      response.writeHead(200, { 'content-type': 'application/octet-stream' });
      const pump = () => {
        while (!response.destroyed && response.write(chunk));
      };
      response.on('drain', pump);
      pump();
    },
  );
  server.on('secureConnection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const dispatcher = new Agent({ connect: { ca: readFileSync(cert) } });
  return {
    origin: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    fetch: ((input: string | URL, init?: RequestInit) =>
      undiciFetch(input, { ...(init as object), dispatcher })) as unknown as typeof fetch,
    open: () => open,
    peak: () => peak,
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      for (const socket of sockets) socket.destroy();
      await Promise.all([
        new Promise((resolve) => server.close(resolve)),
        dispatcher.destroy().catch(() => undefined),
      ]);
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

async function waitFor(condition: () => boolean, ms: number): Promise<void> {
  for (let waited = 0; !condition() && waited < ms; waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describeIsolated('a hostile tool against the egress proxy in the parent', () => {
  it('cannot make the parent hold more than 16 upstream requests at once by pipelining them on one connection', async () => {
    const upstream = await startUpstream('slow');
    const box = new IsolatedProcessSandbox({
      jailRoot: jail,
      fetch: upstream.fetch,
      timeoutMs: 60_000,
    });
    try {
      const { result } = await runHostileTool(box, pipelinedEgress, {
        url: `${upstream.origin}/pipelined`,
        count: 200,
        waitMs: 1_500,
      });
      expect(result).toMatchObject({ status: 'success' });
      // Before the fix: 200 requests in flight upstream at once, from one connection.
      expect(upstream.peak(), 'requests the upstream saw in flight at once').toBeLessThanOrEqual(
        16,
      );
    } finally {
      box.close();
      await upstream.close();
    }
  }, 120_000);

  it('cannot exceed the bound with many connections at once, each pipelining two requests', async () => {
    const upstream = await startUpstream('slow');
    const box = new IsolatedProcessSandbox({
      jailRoot: jail,
      fetch: upstream.fetch,
      timeoutMs: 60_000,
    });
    try {
      const { result } = await runHostileTool(box, pipelinedEgress, {
        url: `${upstream.origin}/many`,
        count: 2,
        connections: 40,
        waitMs: 4_000,
      });
      expect(result).toMatchObject({ status: 'success' });
      expect(upstream.peak(), 'requests the upstream saw in flight at once').toBeLessThanOrEqual(
        16,
      );
    } finally {
      box.close();
      await upstream.close();
    }
  }, 120_000);

  it('leaves no upstream request open once the call is over when it hangs up on each response', async () => {
    const upstream = await startUpstream('endless');
    const box = new IsolatedProcessSandbox({
      jailRoot: jail,
      fetch: upstream.fetch,
      timeoutMs: 60_000,
    });
    try {
      const { result } = await runHostileTool(box, hangUpAfterHead, {
        url: `${upstream.origin}/download`,
        times: 100,
      });
      // Every request was admitted and answered: the hang-ups are the attack, not refusals.
      expect(result).toMatchObject({ status: 'success', output: { result: '100' } });
      box.close();
      // The call is over and its sandbox closed: nothing it asked for may still be open.
      await waitFor(() => upstream.open() === 0, 20_000);
      // Before the fix: all 100 stayed open (an upstream connection each, held by the parent).
      expect(upstream.open(), 'upstream requests still open after the call').toBe(0);
    } finally {
      box.close();
      await upstream.close();
    }
  }, 120_000);
});
