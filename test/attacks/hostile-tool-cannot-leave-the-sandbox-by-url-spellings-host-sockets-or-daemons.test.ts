// Adversary 2 (a hostile tool author) against IsolatedProcessSandbox, from the sandbox re-pass:
// attacks that were tried and are defended (each cheap), kept as controls.
// - Egress: a child that writes its own requests to the proxy, spelling the target so that a
//   host check and a connection could disagree (Host header vs absolute URI, userinfo,
//   backslash, fragment, tab, decimal/IPv4-mapped/0 addresses, a second pipelined request to
//   another host, Content-Length/Transfer-Encoding conflicts, obs-fold headers). The proxy
//   parses the URI once (WHATWG) and connects to what it checked; Node's parser refuses the
//   ambiguous framings.
// - Host sockets: abstract Unix sockets belong to the network namespace, and no host path
//   (outside the jail) exists in the sandbox.
// - Daemons: a grandchild started in a new session by a shell that exits does not outlive the
//   call (the PID namespace ends with it).
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { IsolatedProcessSandbox } from '../../src/sandbox/index.js';
import {
  attackJail,
  runHostileTool,
  type TcpTarget,
  tcpTarget,
} from '../support/attack-targets.js';
import { describeIsolated } from '../support/isolation.js';
import { startTlsServer, type TlsServer } from '../support/tls-server.js';
import { daemonize, rawEgress, unixConnect } from './fixtures/repass-probe-tools.js';

const { base, jail } = attackJail('veridex-repass-controls-');
afterAll(() => rmSync(base, { recursive: true, force: true }));

function answer(result: unknown): string {
  expect(result).toMatchObject({ status: 'success' });
  return (result as { output: { result: string } }).output.result;
}

describeIsolated('a hostile tool trying to leave IsolatedProcessSandbox (defended)', () => {
  let box: IsolatedProcessSandbox;
  let allowed: TlsServer;
  let offList: TcpTarget;
  const seen: string[] = [];
  beforeAll(async () => {
    allowed = await startTlsServer((request, response) => {
      seen.push(`${request.url} ${request.headers.host}`);
      response.end('pong');
    });
    // A host off the allowlist (only 127.0.0.1 is on it): any connection here is an escape.
    offList = await tcpTarget('127.0.0.2');
    box = new IsolatedProcessSandbox({ jailRoot: jail, fetch: allowed.fetch, timeoutMs: 30_000 });
  });
  afterAll(async () => {
    box.close();
    await allowed.close();
    await offList.close();
  });

  it('reaches no host off the allowlist through the proxy, however the target is spelled', async () => {
    const ok = `127.0.0.1:${allowed.port}`;
    const evil = `127.0.0.2:${offList.port}`;
    const head = (target: string, extra = '') =>
      `GET ${target} HTTP/1.1\r\nhost: x\r\n${extra}connection: close\r\n\r\n`;
    const requests = {
      hostHeader: `GET https://${ok}/host HTTP/1.1\r\nhost: ${evil}\r\nconnection: close\r\n\r\n`,
      userinfo: head(`https://${ok}@${evil}/userinfo`),
      backslash: head(`https://${evil}\\@${ok}/backslash`),
      fragment: head(`https://${evil}#@${ok}/fragment`),
      tab: head(`https://${ok}\t@${evil}/tab`),
      decimal: head(`https://2130706434:${offList.port}/decimal`),
      hex: head(`https://0x7f.0.0.2:${offList.port}/hex`),
      mapped: head(`https://[::ffff:127.0.0.2]:${offList.port}/mapped`),
      zero: head(`https://0:${offList.port}/zero`),
      plainHttp: head(`http://${evil}/plain`),
      pipelined: `GET https://${ok}/first HTTP/1.1\r\nhost: x\r\n\r\n${head(`https://${evil}/second`)}`,
      clte: `POST https://${ok}/clte HTTP/1.1\r\nhost: x\r\ncontent-length: 4\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n${head(`https://${evil}/smuggled`)}`,
      tete: `POST https://${ok}/tete HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\ntransfer-encoding: x\r\n\r\n0\r\n\r\n${head(`https://${evil}/smuggled`)}`,
      fold: head(`https://${ok}/fold`, 'x-a: a\r\n b\r\n'),
    };
    const answers = JSON.parse(
      answer((await runHostileTool(box, rawEgress, { requests, waitMs: 5_000 })).result),
    ) as Record<string, string[]>;
    // The allowed host was reached, by its own name, only where nothing else was asked for.
    expect(answers.hostHeader).toEqual(['HTTP/1.1 200']);
    expect(answers.pipelined).toEqual(['HTTP/1.1 200', 'HTTP/1.1 403']);
    for (const name of ['userinfo', 'decimal', 'hex', 'mapped', 'zero', 'plainHttp']) {
      expect(answers[name], name).toEqual(['HTTP/1.1 403']);
    }
    for (const name of ['backslash', 'fragment', 'tab', 'clte', 'tete', 'fold']) {
      expect(answers[name], name).toEqual(['HTTP/1.1 400']);
    }
    expect(offList.connections()).toBe(0);
    expect(seen.sort()).toEqual([`/first ${ok}`, `/host ${ok}`]);
  });

  it('reaches no host service over an abstract or a path Unix socket', async () => {
    const abstract = `\0veridex-repass-${process.pid}-${Date.now()}`;
    const path = join(base, 'host.sock');
    let connections = 0;
    const servers = [net.createServer(() => connections++), net.createServer(() => connections++)];
    await Promise.all([
      new Promise<void>((resolve) => servers[0]!.listen(abstract, resolve)),
      new Promise<void>((resolve) => servers[1]!.listen(path, resolve)),
    ]);
    try {
      const answers = JSON.parse(
        answer((await runHostileTool(box, unixConnect, [abstract, path])).result),
      ) as Record<string, string>;
      expect(answers[JSON.stringify(abstract)]).toBe('ECONNREFUSED');
      expect(answers[JSON.stringify(path)]).toBe('ENOENT');
      expect(connections).toBe(0);
    } finally {
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    }
  });

  it('leaves no daemonised grandchild running once the call has returned', async () => {
    const marker = `66.${Math.floor(Math.random() * 1e6)}`;
    const running = () => {
      try {
        return execFileSync('pgrep', ['-f', `^sleep ${marker}`], { encoding: 'utf8' }).trim();
      } catch {
        return ''; // pgrep exits 1 when nothing matches
      }
    };
    expect(answer((await runHostileTool(box, daemonize, { marker, hold: false })).result)).toBe(
      'daemonized',
    );
    for (let waited = 0; running() !== '' && waited < 10_000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(running()).toBe('');
  });
});
