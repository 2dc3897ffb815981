// A real HTTPS server on 127.0.0.1 with a certificate made for this run (openssl), and a fetch
// that trusts it: what an allowlisted tool talks to in the egress tests.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, fetch as undiciFetch } from 'undici';

export interface TlsServer {
  port: number;
  /** `https://127.0.0.1:<port>` */
  origin: string;
  /** Paths requested so far. */
  requests: string[];
  /** A fetch that trusts this server's certificate (for the parent's egress proxy). */
  fetch: typeof fetch;
  close(): Promise<void>;
}

export async function startTlsServer(
  handler: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<TlsServer> {
  const directory = mkdtempSync(join(tmpdir(), 'veridex-tls-'));
  const key = join(directory, 'key.pem');
  const cert = join(directory, 'cert.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes']
      .concat(['-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1'])
      .concat(['-addext', 'subjectAltName=IP:127.0.0.1']),
    { stdio: 'ignore' },
  );
  const requests: string[] = [];
  const server = createServer(
    { key: readFileSync(key), cert: readFileSync(cert) },
    (request, response) => {
      requests.push(request.url ?? '');
      handler(request, response);
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const dispatcher = new Agent({ connect: { ca: readFileSync(cert) } });
  return {
    port,
    origin: `https://127.0.0.1:${port}`,
    requests,
    fetch: ((input: string | URL, init?: RequestInit) =>
      undiciFetch(input, { ...(init as object), dispatcher })) as unknown as typeof fetch,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await dispatcher.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
