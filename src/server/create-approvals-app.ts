import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { secureHeaders } from 'hono/secure-headers';
import { ApprovalManager } from '../approvals/index.js';
import { AuditLog, PostgresAuditStore } from '../audit/index.js';
import { type Database, migrate } from '../db/index.js';
import { VeridexError } from '../errors/index.js';
import { loadDirectorySeal, PostgresApproverDirectory } from '../identity/index.js';
import { ApprovalFeed } from './approval-feed.js';
import { hostCheck, requireSession } from './authenticate.js';
import { ChallengeStore } from './challenge-store.js';
import { errorResponse } from './http-error.js';
import type { InboxContext, InboxEnv } from './inbox-context.js';
import { InvitationStore } from './invitations.js';
import { openApiDocument } from './openapi.js';
import { loadPageAssets } from './page-assets.js';
import { type PasskeyOptions, Passkeys } from './passkeys.js';
import { approvalRoutes } from './routes/approval-routes.js';
import { authRoutes } from './routes/auth-routes.js';
import { eventRoutes } from './routes/event-routes.js';
import { ADMIN_ROLE, passkeyRoutes } from './routes/passkey-routes.js';
import { threadRoutes } from './routes/thread-routes.js';
import { SessionStore } from './session-store.js';
import { WebhookDispatcher, type WebhookOptions } from './webhooks.js';

/** The largest request body the API reads (`input_too_large`, 413, beyond it). */
const MAX_BODY_BYTES = 256 * 1024;

/** Options for {@link createApprovalsApp}. */
export interface ApprovalsAppOptions {
  /** The database the graphs use (migrated on first use). */
  db: Database;
  /**
   * The inbox's public origin, e.g. `http://localhost:8787`: the audience of sign-in
   * statements, the only `Origin` accepted on mutating requests, and the passkeys' origin.
   */
  origin: string;
  /**
   * The approvals manager (its directory decides who may sign in and decide). Default: one over
   * `db` and `audit`, with the directory in the database (`veridex approvers add`).
   */
  approvals?: ApprovalManager;
  /** Where decisions and refusals are recorded. Default: the audit log in `db`. */
  audit?: AuditLog;
  /** Passkey relying party (default: the origin's host name, "Veridex approvals"). */
  passkeys?: PasskeyOptions;
  /**
   * Webhooks for `approval_requested`, `approval_decided`, `approval_expired`: endpoints with
   * Standard Webhooks secrets, retries, backoff. Default: none.
   */
  webhooks?: WebhookOptions;
  /** Session lifetime (default 15 minutes, absolute). */
  sessionTtlMs?: number;
  /** More accepted `Host` header values (default: the origin's host, and 127.0.0.1/localhost on its port). */
  allowedHosts?: readonly string[];
  /** How often the live feed compares the approvals table (default 1000 ms). */
  pollIntervalMs?: number;
  /**
   * Leave `Secure` off the session cookie. Only for a deployment behind something that cannot
   * do TLS and is not localhost; browsers accept Secure cookies on http://localhost.
   */
  insecureCookies?: boolean;
  now?: () => Date;
}

/** The service: a Hono app to serve or mount, and what must be stopped with it. */
export interface ApprovalsApp {
  /** The Hono app (`serve({ fetch: inbox.app.fetch })`, or `yourApp.route('/', inbox.app)`). */
  app: Hono<InboxEnv>;
  /** The request handler (same as `app.fetch`). */
  fetch: (request: Request) => Response | Promise<Response>;
  /** The live feed the SSE endpoint and webhooks listen to. */
  feed: ApprovalFeed;
  /** The webhook dispatcher and its delivery log, when webhooks are configured. */
  webhooks?: WebhookDispatcher;
  /** Resolves once the schema is migrated and the feed (and webhooks) run. */
  ready: Promise<void>;
  /** Stops polling and retrying. The database stays open: it belongs to the caller. */
  close(): Promise<void>;
}

/**
 * The approvals service over the database the graphs use: REST endpoints (documented at
 * `/api/openapi.json`) to list requests, read one with its trace, and post signed decisions;
 * live events over SSE; sign-in with approver keys. Every route except the OpenAPI document,
 * health and sign-in requires a session; cookie sessions are HttpOnly, Secure, SameSite=Strict
 * and CSRF-checked; every decision goes through `ApprovalManager.decide`, so route, tier,
 * allowlist, quorum, proposer and replay rules hold exactly as for the CLI.
 *
 * @example
 * const db = await createDatabase({ url: process.env.DATABASE_URL });
 * const inbox = createApprovalsApp({ db, origin: 'http://localhost:8787' });
 * serve({ fetch: inbox.fetch, port: 8787, hostname: '127.0.0.1' });
 */
export function createApprovalsApp(options: ApprovalsAppOptions): ApprovalsApp {
  const origin = normaliseOrigin(options.origin);
  const now = options.now ?? (() => new Date());
  const db = options.db;
  const audit = options.audit ?? new AuditLog({ store: new PostgresAuditStore(db) });
  const approvals = options.approvals ?? new ApprovalManager({ db, audit, now });
  const feed = new ApprovalFeed(db, approvals, { now });
  // Sessions and invitations are sealed with the directory's key, like its rows.
  const seal =
    approvals.directory instanceof PostgresApproverDirectory
      ? approvals.directory.seal
      : loadDirectorySeal();
  const inbox: InboxContext = {
    db,
    approvals,
    audit,
    sessions: new SessionStore(db, {
      seal,
      now,
      ...(options.sessionTtlMs !== undefined ? { ttlMs: options.sessionTtlMs } : {}),
    }),
    challenges: new ChallengeStore(db, { now }),
    feed,
    invitations: new InvitationStore(db, { seal, now }),
    rpId: options.passkeys?.rpId ?? new URL(origin).hostname,
    rpName: options.passkeys?.rpName ?? 'Veridex approvals',
    origin,
    allowedHosts: hostsFor(origin, options.allowedHosts ?? []),
    secureCookies: options.insecureCookies !== true,
    now,
  };
  const passkeys = new Passkeys(inbox);
  const webhooks = options.webhooks
    ? new WebhookDispatcher(db, { now, ...options.webhooks })
    : undefined;
  // Migrations and the live feed start now, so webhooks flow even before the first request.
  // Requests wait for the feed's first poll (its baseline: what exists then is not news), so
  // whatever happens after a client's first read is announced to it.
  const ready = migrate(db).then(async () => {
    await feed.poll().catch(() => undefined);
    feed.start(options.pollIntervalMs ?? 1000);
    webhooks?.attach(feed);
  });
  ready.catch(() => undefined);
  const app = new Hono<InboxEnv>();
  app.onError((error, c) => errorResponse(c, error));
  app.use('*', hostCheck(inbox));
  app.use('*', async (_c, next) => {
    await ready;
    await next();
  });
  app.use(
    '*',
    secureHeaders({
      contentSecurityPolicy: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        frameAncestors: ["'none'"],
        formAction: ["'self'"],
        baseUri: ["'none'"],
      },
      referrerPolicy: 'no-referrer',
    }),
  );
  app.use(
    '/api/*',
    bodyLimit({
      maxSize: MAX_BODY_BYTES,
      onError: () => {
        throw new VeridexError(
          'input_too_large',
          `The request body is larger than ${MAX_BODY_BYTES} bytes, the most the API accepts.`,
        );
      },
    }),
  );
  app.get('/api/openapi.json', (c) => c.json(openApiDocument(origin)));
  app.get('/api/health', (c) => c.json({ ok: true }));
  app.route('/', authRoutes(inbox));
  app.route('/', passkeyRoutes(inbox, passkeys));
  app.route('/', approvalRoutes(inbox, passkeys));
  app.route('/', threadRoutes(inbox));
  app.route('/', eventRoutes(inbox));
  app.get('/api/webhooks/deliveries', requireSession(inbox), async (c) => {
    if (!c.get('session').approver.roles.includes(ADMIN_ROLE)) {
      throw new VeridexError(
        'admin_required',
        `Only approvers with the role "${ADMIN_ROLE}" may read the delivery log.`,
      );
    }
    const limit = Number(c.req.query('limit') ?? 100);
    return c.json({
      items: webhooks
        ? await webhooks.deliveries({
            limit: Number.isInteger(limit) && limit > 0 && limit <= 500 ? limit : 100,
          })
        : [],
    });
  });
  // The inbox page: a static shell, one script, one stylesheet (all same-origin, CSP 'self').
  app.get('/', async (c) => c.html((await loadPageAssets()).html));
  app.get('/assets/inbox.js', async (c) => {
    c.header('content-type', 'text/javascript; charset=utf-8');
    c.header('cache-control', 'no-cache');
    return c.body((await loadPageAssets()).script);
  });
  app.get('/assets/inbox.css', async (c) => {
    c.header('content-type', 'text/css; charset=utf-8');
    c.header('cache-control', 'no-cache');
    return c.body((await loadPageAssets()).style);
  });
  app.notFound((c) =>
    c.json(
      { error: { code: 'not_found', message: `No route ${c.req.method} ${c.req.path}.` } },
      404,
    ),
  );
  return {
    app,
    fetch: (request) => app.fetch(request),
    feed,
    ...(webhooks ? { webhooks } : {}),
    ready,
    close: async () => {
      await ready.catch(() => undefined);
      await feed.stop();
      await webhooks?.stop();
    },
  };
}

function normaliseOrigin(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new VeridexError(
      'config_invalid',
      `origin must be a URL such as http://localhost:8787, got "${text}".`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new VeridexError('config_invalid', `origin must be http(s), got "${text}".`);
  }
  return url.origin;
}

function hostsFor(origin: string, extra: readonly string[]): Set<string> {
  const url = new URL(origin);
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  const hosts = new Set([url.host.toLowerCase(), ...extra.map((host) => host.toLowerCase())]);
  if (url.hostname === 'localhost' || url.hostname === '127.0.0.1') {
    hosts.add(`localhost:${port}`);
    hosts.add(`127.0.0.1:${port}`);
  }
  return hosts;
}
