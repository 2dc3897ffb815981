import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { IsolatedProcessSandbox } from '../src/sandbox/index.js';
import { executeTool } from '../src/tools/execute-tool.js';
import { tool } from '../src/tools/index.js';
import { startTlsServer } from '../test/support/tls-server.js';
import { median, ms } from './stats.js';

// The child imports this very file to find the tool (sandbox.module), so it only defines.
export const fetchMany = tool({
  name: 'fetch_many',
  description: 'Fetches a URL several times, in sequence or all at once; answers the time taken.',
  safetyClass: 'read',
  input: z.object({ url: z.string(), times: z.number(), parallel: z.boolean() }),
  output: z.object({ ms: z.number(), bytes: z.number() }),
  sandbox: { module: import.meta.url, networkAllowlist: ['127.0.0.1'] },
  async execute({ input, http }) {
    const one = async () => (await (await http.fetch(input.url)).arrayBuffer()).byteLength;
    const start = performance.now();
    let bytes = 0;
    if (input.parallel) {
      const sizes = await Promise.all(Array.from({ length: input.times }, one));
      bytes = sizes.reduce((sum, size) => sum + size, 0);
    } else {
      for (let round = 0; round < input.times; round++) bytes += await one();
    }
    return { ms: performance.now() - start, bytes };
  },
});

/**
 * `npm run bench -- egress`: what the IsolatedProcessSandbox egress proxy costs a tool, measured
 * inside the sandbox against an https server on 127.0.0.1: one small GET after another (20 per
 * call: the latency of a request through the proxy), and 8 downloads of 4 MiB at once (the
 * proxy's throughput). Median of 7 calls each.
 */
export async function run(): Promise<void> {
  const availability = IsolatedProcessSandbox.availability();
  if (!availability.available) {
    console.log(`(egress skipped: ${availability.reason})`);
    return;
  }
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'veridex-bench-egress-')));
  const jail = join(base, 'jail');
  mkdirSync(jail);
  chmodSync(base, 0o711); // a root agent's sandbox user must reach the jail
  const large = Buffer.alloc(4 * 1024 * 1024, 0x61);
  const server = await startTlsServer((request, response) => {
    response.end(request.url === '/large' ? large : 'pong');
  });
  const sandbox = new IsolatedProcessSandbox({ jailRoot: jail, fetch: server.fetch });
  const call = async (path: string, times: number, parallel: boolean) => {
    const url = `${server.origin}${path}`;
    const result = await executeTool(fetchMany, { url, times, parallel }, { sandbox });
    if (result.status !== 'success') throw new Error(`egress call failed: ${result.message}`);
    return result.output as { ms: number; bytes: number };
  };
  try {
    await call('/small', 1, false); // bundles the tool module once
    const sequential: number[] = [];
    const parallel: number[] = [];
    for (let round = 0; round < 7; round++) {
      sequential.push((await call('/small', 20, false)).ms / 20);
      const download = await call('/large', 8, true);
      parallel.push(download.bytes / 1024 / 1024 / (download.ms / 1000));
    }
    const requestMs = median(sequential);
    const mibPerSecond = median(parallel);
    console.log(`small GET through the proxy, one after another: ${ms(requestMs)} ms each`);
    console.log(
      `8 × 4 MiB downloads at once:                     ${mibPerSecond.toFixed(0)} MiB/s`,
    );
    console.log(
      `RESULT egress sequential_request_ms=${requestMs.toFixed(2)} parallel_mib_s=${mibPerSecond.toFixed(0)}`,
    );
  } finally {
    sandbox.close();
    await server.close();
    rmSync(base, { recursive: true, force: true });
  }
}
