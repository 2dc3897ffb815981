import { Webhook } from 'standardwebhooks';
import type { Database } from '../db/index.js';
import { VeridexError } from '../errors/index.js';
import type { ApprovalFeed, InboxEvent, InboxEventType } from './approval-feed.js';
import {
  CLAIM_DELIVERIES,
  ENQUEUE_DELIVERY,
  LIST_DELIVERIES,
  MARK_DELIVERED,
  MARK_FAILED_ATTEMPT,
} from './sql.js';

/** One receiver of webhooks. */
export interface WebhookEndpoint {
  /** Where to POST (http or https). */
  url: string;
  /**
   * The signing secret in Standard Webhooks form (`whsec_` + base64 of at least 24 random bytes).
   * Receivers verify with it; share it with them only.
   */
  secret: string;
  /** Which events to send (default: all three). */
  events?: readonly InboxEventType[];
}

/** Options for {@link WebhookDispatcher}. */
export interface WebhookOptions {
  endpoints: readonly WebhookEndpoint[];
  /** Attempts before a delivery is given up (`failed`). Default 8. */
  maxAttempts?: number;
  /** Delay before attempt `n + 1` after `n` failed ones. Default 2^(n-1) s plus jitter, at most 1 h. */
  backoffMs?: (failedAttempts: number) => number;
  /** How long one attempt may take. Default 10 s. */
  timeoutMs?: number;
  /** How often due retries are looked for. Default 1 s. */
  pollIntervalMs?: number;
  now?: () => Date;
}

/** One row of the delivery log. */
export interface WebhookDelivery {
  endpoint: string;
  messageId: string;
  eventType: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  nextAttemptAt: string;
  lastStatus?: number;
  lastError?: string;
  createdAt: string;
  deliveredAt?: string;
}

interface ClaimedRow {
  endpoint: string;
  message_id: string;
  event_type: string;
  payload: Record<string, unknown>;
  attempts: number;
  created_at: Date;
}

const MIN_SECRET_BYTES = 24;

/**
 * Delivers `approval_requested`, `approval_decided` and `approval_expired` to configured URLs,
 * signed with the Standard Webhooks scheme (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature: v1,<HMAC-SHA256>` via the `standardwebhooks` library), so a receiver
 * verifies them with any Standard Webhooks library. Every delivery is a row in
 * `veridex_webhook_deliveries` — the delivery log — keyed by endpoint and event id, so several
 * service instances enqueue each event once and claim each attempt once (`SKIP LOCKED`).
 * Failed attempts (non-2xx, network error, timeout) are retried with exponential backoff until
 * `maxAttempts`, then marked `failed`. Receivers must deduplicate by `webhook-id`: a crash after
 * a receiver answered but before the log was updated sends that message again.
 */
export class WebhookDispatcher {
  readonly #db: Database;
  readonly #endpoints: ReadonlyArray<WebhookEndpoint & { signer: Webhook }>;
  readonly #options: WebhookOptions;
  readonly #now: () => Date;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> = Promise.resolve();

  /** @throws VeridexError `config_invalid` for a bad URL or a weak or malformed secret. */
  constructor(db: Database, options: WebhookOptions) {
    this.#db = db;
    this.#options = options;
    this.#now = options.now ?? (() => new Date());
    this.#endpoints = options.endpoints.map((endpoint) => {
      let url: URL;
      try {
        url = new URL(endpoint.url);
      } catch {
        throw invalidConfig(`webhook URL "${String(endpoint.url).slice(0, 200)}" is not a URL`);
      }
      if (url.protocol !== 'https:' && url.protocol !== 'http:') {
        throw invalidConfig(`webhook URL ${url.origin} must be http or https`);
      }
      const raw = Buffer.from(String(endpoint.secret).replace(/^whsec_/, ''), 'base64');
      if (!String(endpoint.secret).startsWith('whsec_') || raw.length < MIN_SECRET_BYTES) {
        throw invalidConfig(
          `the secret of webhook ${url.origin} must be "whsec_" + base64 of at least ${MIN_SECRET_BYTES} random bytes`,
        );
      }
      return { ...endpoint, url: url.toString(), signer: new Webhook(endpoint.secret) };
    });
  }

  /** Enqueues every event the feed publishes, and starts delivering. Returns the unsubscribe function. */
  attach(feed: ApprovalFeed): () => void {
    const unsubscribe = feed.subscribe((event) => {
      void this.enqueue(event)
        .then(() => this.deliverDue())
        .catch(() => undefined);
    });
    this.start(this.#options.pollIntervalMs ?? 1000);
    return () => {
      unsubscribe();
    };
  }

  /** Records one delivery per interested endpoint (once, however often it is called). */
  async enqueue(event: InboxEvent): Promise<void> {
    const payload = {
      type: event.type,
      timestamp: event.at,
      data: event,
    };
    const at = this.#now().toISOString();
    for (const endpoint of this.#endpoints) {
      if (endpoint.events && !endpoint.events.includes(event.type)) continue;
      await this.#db.query(ENQUEUE_DELIVERY, [
        endpoint.url,
        event.id,
        event.type,
        JSON.stringify(payload),
        at,
      ]);
    }
  }

  /** Retries due deliveries every `intervalMs` until {@link stop}; the timer never keeps the process alive. */
  start(intervalMs: number): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => void this.deliverDue().catch(() => undefined), intervalMs);
    this.#timer.unref();
  }

  /** Stops retrying and waits for attempts in flight. */
  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running.catch(() => undefined);
  }

  /** Sends every delivery that is due now (one attempt each). */
  deliverDue(): Promise<void> {
    const next = this.#running.catch(() => undefined).then(() => this.#deliverDue());
    this.#running = next;
    return next;
  }

  /** The delivery log, newest first (optionally of one event id). */
  async deliveries(
    options: { messageId?: string; limit?: number } = {},
  ): Promise<WebhookDelivery[]> {
    const { rows } = await this.#db.query<{
      endpoint: string;
      message_id: string;
      event_type: string;
      status: WebhookDelivery['status'];
      attempts: number;
      next_attempt_at: Date;
      last_status: number | null;
      last_error: string | null;
      created_at: Date;
      delivered_at: Date | null;
    }>(LIST_DELIVERIES, [options.messageId ?? null, options.limit ?? 100]);
    return rows.map((row) => ({
      endpoint: row.endpoint,
      messageId: row.message_id,
      eventType: row.event_type,
      status: row.status,
      attempts: row.attempts,
      nextAttemptAt: row.next_attempt_at.toISOString(),
      ...(row.last_status !== null ? { lastStatus: row.last_status } : {}),
      ...(row.last_error !== null ? { lastError: row.last_error } : {}),
      createdAt: row.created_at.toISOString(),
      ...(row.delivered_at ? { deliveredAt: row.delivered_at.toISOString() } : {}),
    }));
  }

  async #deliverDue(): Promise<void> {
    const timeoutMs = this.#options.timeoutMs ?? 10_000;
    for (;;) {
      const now = this.#now();
      const { rows } = await this.#db.query<ClaimedRow>(CLAIM_DELIVERIES, [
        now.toISOString(),
        new Date(now.getTime() + timeoutMs + 30_000).toISOString(),
        20,
      ]);
      if (rows.length === 0) return;
      await Promise.all(rows.map((row) => this.#attempt(row, timeoutMs)));
    }
  }

  async #attempt(row: ClaimedRow, timeoutMs: number): Promise<void> {
    const endpoint = this.#endpoints.find((candidate) => candidate.url === row.endpoint);
    if (!endpoint) {
      // Configured no more: leave the row for an instance that still has the endpoint.
      return;
    }
    const body = JSON.stringify(row.payload);
    const sentAt = this.#now();
    let status: number | undefined;
    let problem: string | undefined;
    try {
      const response = await fetch(endpoint.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': row.message_id,
          'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
          'webhook-signature': endpoint.signer.sign(row.message_id, sentAt, body),
        },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
      });
      status = response.status;
      await response.body?.cancel().catch(() => undefined);
      if (status >= 200 && status < 300) {
        await this.#db.query(MARK_DELIVERED, [
          row.endpoint,
          row.message_id,
          this.#now().toISOString(),
          status,
        ]);
        return;
      }
      problem = `HTTP ${status}`;
    } catch (error) {
      problem = (error as Error).name === 'TimeoutError' ? 'timed out' : 'network error';
    }
    const maxAttempts = this.#options.maxAttempts ?? 8;
    const giveUp = row.attempts >= maxAttempts;
    const delay = (this.#options.backoffMs ?? defaultBackoff)(row.attempts);
    await this.#db.query(MARK_FAILED_ATTEMPT, [
      row.endpoint,
      row.message_id,
      giveUp ? 'failed' : 'pending',
      new Date(this.#now().getTime() + delay).toISOString(),
      status ?? null,
      problem,
    ]);
  }
}

/** 1 s, 2 s, 4 s … capped at an hour, with up to 20% jitter so retries of many events spread out. */
export function defaultBackoff(failedAttempts: number): number {
  const base = Math.min(60 * 60 * 1000, 1000 * 2 ** Math.max(0, failedAttempts - 1));
  return Math.round(base * (1 + Math.random() * 0.2));
}

function invalidConfig(message: string): VeridexError {
  return new VeridexError('config_invalid', `Webhooks: ${message}.`);
}
