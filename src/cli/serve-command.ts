import { parseArgs } from 'node:util';
import { startApprovalsServer } from '../server/index.js';
import { DATABASE_OPTION_HELP, openCommandDatabase } from './database-option.js';
import { type CliIo, EXIT, UsageError } from './io.js';

export const SERVE_USAGE = `Usage: veridex serve [--port 8787] [--host 127.0.0.1] [--origin URL] [--webhook URL ...] [--database-url URL]

Starts the approvals inbox over the configured database: the web page at /, the REST API
(OpenAPI document at /api/openapi.json), live events at /api/events. Approvers sign in with a
passkey (or an approver key); every decision is signed and checked against the directory.
  --port     port to listen on (default 8787; 0 picks a free one)
  --host     address to listen on (default 127.0.0.1: this machine only)
  --origin   the URL approvers open (default http://localhost:<port>); passkeys are bound to it
  --webhook  POST approval_requested/decided/expired here, signed (Standard Webhooks) with the
             secret in $VERIDEX_WEBHOOK_SECRET (whsec_…); retried with backoff (repeatable)
${DATABASE_OPTION_HELP}
On the embedded PGlite database it shares the database with your app in either order: started
first it exposes it on a local socket (your app's createDatabase() connects through it), started
second it connects through the app's (open it with createDatabase({ expose: true })).
Stops on Ctrl-C (SIGINT) or SIGTERM.`;

/**
 * `veridex serve`: runs the approvals service until the process is told to stop. `stop` lets
 * an embedder (or a test) end it without a signal.
 */
export async function serveCommand(
  argv: string[],
  io: CliIo,
  stop: Promise<unknown> = signalled(),
): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      origin: { type: 'string' },
      webhook: { type: 'string', multiple: true },
      'database-url': { type: 'string' },
    },
  });
  if (positionals.length > 0)
    throw new UsageError(`unexpected arguments: ${positionals.join(' ')}`);
  const port = values.port === undefined ? 8787 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new UsageError('--port must be a port number (0-65535)');
  }
  const hostname = values.host ?? '127.0.0.1';
  const webhookSecret = process.env.VERIDEX_WEBHOOK_SECRET;
  if (values.webhook?.length && !webhookSecret) {
    throw new UsageError(
      '--webhook needs the signing secret in VERIDEX_WEBHOOK_SECRET (whsec_ + base64)',
    );
  }
  const db = await openCommandDatabase(values['database-url'], {
    share: true,
    warn: (line) => io.err(line),
  });
  try {
    const server = await startApprovalsServer({
      db,
      port,
      hostname,
      ...(values.origin ? { origin: values.origin } : {}),
      ...(values.webhook?.length
        ? {
            webhooks: { endpoints: values.webhook.map((url) => ({ url, secret: webhookSecret! })) },
          }
        : {}),
    });
    io.out(`Approvals inbox on ${server.url} — open ${server.origin}`);
    if (hostname !== '127.0.0.1' && hostname !== 'localhost' && hostname !== '::1') {
      io.err(
        `warning: listening on ${hostname}, reachable from other machines; put TLS in front of it (sessions need HTTPS off localhost).`,
      );
    }
    await stop;
    io.out('Stopping.');
    await server.close();
    return EXIT.ok;
  } finally {
    await db.close();
  }
}

function signalled(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}
