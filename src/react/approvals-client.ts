import type { SignedDecision } from '../audit/decision-statement.js';
import type { TraceEvent } from '../audit/trace-event.js';
import type { InboxEvent } from '../server/approval-feed.js';
import type { ApprovalDetailView, ApprovalView } from '../server/approval-view.js';
import type { RunView } from '../server/run-view.js';
import { readServerSentEvents } from './sse-reader.js';

/** Options for {@link createApprovalsClient}. */
export interface ApprovalsClientOptions {
  /** Where the service runs (default: this page's origin, `''`). */
  baseUrl?: string;
  /**
   * A session token from `POST /api/auth/key` (scripts, servers). Without it the browser's
   * session cookie is used, with the CSRF token fetched from `/api/session`.
   */
  token?: string;
  /** Default: the global `fetch`. */
  fetch?: typeof fetch;
}

/** An error answer of the service, with its stable code. */
export class ApprovalsApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'ApprovalsApiError';
  }
}

/** A small typed client of the approvals service's REST and SSE API. */
export interface ApprovalsClient {
  list(query?: {
    status?: string;
    thread?: string;
    scope?: 'all' | 'mine';
    limit?: number;
    cursor?: string;
  }): Promise<{ items: ApprovalView[]; nextCursor: string | null }>;
  get(id: string): Promise<ApprovalDetailView & { mayDecide: boolean }>;
  decide(id: string, decision: SignedDecision): Promise<ApprovalView>;
  threadEvents(threadId: string): Promise<TraceEvent[]>;
  run(threadId: string): Promise<RunView>;
  /**
   * Calls `listener` with every live event until the returned function is called, and
   * `onOpen` once the server listens for this stream (its `ready` event). An event that
   * happened before then is never delivered: read the state again in `onOpen`.
   */
  subscribe(
    listener: (event: InboxEvent) => void,
    onError?: (error: unknown) => void,
    onOpen?: () => void,
  ): () => void;
}

/**
 * A client of `createApprovalsApp`'s API for browsers (session cookie + CSRF) and scripts
 * (Bearer token). The hooks use it; it is usable alone.
 */
export function createApprovalsClient(options: ApprovalsClientOptions = {}): ApprovalsClient {
  const base = options.baseUrl ?? '';
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init));
  let csrf: Promise<string> | undefined;
  const headers = (extra: Record<string, string> = {}): Record<string, string> =>
    options.token ? { authorization: `Bearer ${options.token}`, ...extra } : extra;
  const call = async <T>(path: string, init: RequestInit = {}): Promise<T> => {
    const response = await doFetch(`${base}${path}`, {
      credentials: 'same-origin',
      ...init,
      headers: { ...headers(), ...(init.headers as Record<string, string> | undefined) },
    });
    const body = (await response.json().catch(() => ({}))) as {
      error?: { code: string; message: string };
    };
    if (!response.ok) {
      throw new ApprovalsApiError(
        body.error?.code ?? 'http_error',
        body.error?.message ?? `HTTP ${response.status}`,
        response.status,
      );
    }
    return body as T;
  };
  const csrfToken = () => {
    csrf ??= call<{ csrfToken: string }>('/api/session').then((session) => session.csrfToken);
    csrf.catch(() => {
      csrf = undefined;
    });
    return csrf;
  };
  return {
    list: (query = {}) => {
      const params = new URLSearchParams();
      for (const [name, value] of Object.entries(query)) {
        if (value !== undefined) params.set(name, String(value));
      }
      return call(`/api/approvals?${params}`);
    },
    get: (id) => call(`/api/approvals/${encodeURIComponent(id)}`),
    decide: async (id, decision) =>
      call(`/api/approvals/${encodeURIComponent(id)}/decisions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(options.token ? {} : { 'x-csrf-token': await csrfToken() }),
        },
        body: JSON.stringify(decision),
      }),
    threadEvents: async (threadId) => {
      const events: TraceEvent[] = [];
      let after: number | null = 0;
      while (after !== null) {
        const page: { items: TraceEvent[]; next: number | null } = await call(
          `/api/threads/${encodeURIComponent(threadId)}/events?after=${after}&limit=100`,
        );
        events.push(...page.items);
        after = page.next;
      }
      return events;
    },
    run: (threadId) => call(`/api/threads/${encodeURIComponent(threadId)}/run`),
    subscribe: (listener, onError, onOpen) => {
      const controller = new AbortController();
      void (async () => {
        const response = await doFetch(`${base}/api/events`, {
          credentials: 'same-origin',
          headers: headers({ accept: 'text/event-stream' }),
          signal: controller.signal,
        });
        if (!response.ok || !response.body) {
          throw new ApprovalsApiError('stream_failed', `HTTP ${response.status}`, response.status);
        }
        await readServerSentEvents(response.body, (event) => {
          if (event.event === 'ready') onOpen?.();
          else if (event.event.startsWith('approval_')) {
            listener(JSON.parse(event.data) as InboxEvent);
          }
        });
      })().catch((error: unknown) => {
        if (!controller.signal.aborted) onError?.(error);
      });
      return () => controller.abort();
    },
  };
}
