import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import {
  type ApprovalsApp,
  type ApprovalsAppOptions,
  createApprovalsApp,
} from './create-approvals-app.js';

/** Options for {@link startApprovalsServer}. */
export interface StartApprovalsServerOptions extends Omit<ApprovalsAppOptions, 'origin'> {
  /** Default 8787; 0 picks a free port. */
  port?: number;
  /** Address to listen on. Default `127.0.0.1`: reachable from this machine only. */
  hostname?: string;
  /** Public origin. Default `http://localhost:<port>` (passkeys need a host name, not an IP). */
  origin?: string;
}

/** A running service. */
export interface RunningApprovalsServer {
  /** Where it listens, e.g. `http://127.0.0.1:8787`. */
  url: string;
  /** Its public origin, e.g. `http://localhost:8787`. */
  origin: string;
  port: number;
  inbox: ApprovalsApp;
  /** Stops accepting connections, ends open streams, stops polling. */
  close(): Promise<void>;
}

/**
 * Starts the approvals service on Node's HTTP server (what `veridex serve` runs). Listens first,
 * so that with `port: 0` the origin names the port actually bound.
 */
export async function startApprovalsServer(
  options: StartApprovalsServerOptions,
): Promise<RunningApprovalsServer> {
  const hostname = options.hostname ?? '127.0.0.1';
  let handler: ((request: Request) => Response | Promise<Response>) | undefined;
  const server: Server = createServer(getRequestListener((request) => handler!(request)));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 8787, hostname, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const origin = options.origin ?? `http://localhost:${port}`;
  const inbox = createApprovalsApp({ ...options, origin });
  handler = inbox.fetch;
  return {
    url: `http://${hostname.includes(':') ? `[${hostname}]` : hostname}:${port}`,
    origin,
    port,
    inbox,
    close: async () => {
      await inbox.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
