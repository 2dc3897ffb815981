import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { InboxEvent } from '../approval-feed.js';
import { liveSession, requireSession } from '../authenticate.js';
import type { InboxContext, InboxEnv } from '../inbox-context.js';

/** How often an idle stream sends a comment, so proxies and browsers keep it open. */
const KEEPALIVE_MS = 15_000;

/**
 * `GET /api/events`: Server-Sent Events `approval_requested`, `approval_decided` and
 * `approval_expired`, live, for signed-in approvers. Each event's `id` is deterministic;
 * a client reconnecting with `Last-Event-ID` first gets what it missed (while the service
 * still remembers it). The stream ends at the first event or keepalive after its session is
 * signed out or expires, or its key or approver is revoked.
 */
export function eventRoutes(inbox: InboxContext): Hono<InboxEnv> {
  const routes = new Hono<InboxEnv>();
  routes.get('/api/events', requireSession(inbox), (c) => {
    const lastId = c.req.header('last-event-id');
    const { token } = c.get('session');
    // A stream lives no longer than what opened it: the session (expiry, sign-out) and the
    // approver's key and entry in the directory. Checked before every event and every keepalive.
    const stillLive = async () => (await liveSession(inbox, token)) !== undefined;
    return streamSSE(c, async (stream) => {
      const queue: InboxEvent[] = [...inbox.feed.since(lastId)];
      let wake: (() => void) | undefined;
      const unsubscribe = inbox.feed.subscribe((event) => {
        queue.push(event);
        wake?.();
      });
      let closed = false;
      stream.onAbort(() => {
        closed = true;
        wake?.();
      });
      try {
        await stream.writeSSE({ event: 'ready', data: JSON.stringify({ origin: inbox.origin }) });
        while (!closed) {
          while (queue.length > 0 && !closed) {
            const event = queue.shift()!;
            if (!(await stillLive())) {
              closed = true;
              break;
            }
            await stream.writeSSE({ id: event.id, event: event.type, data: JSON.stringify(event) });
          }
          if (closed) break;
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, KEEPALIVE_MS);
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          wake = undefined;
          if (closed || !(await stillLive())) break;
          if (queue.length === 0) await stream.write(': keepalive\n\n');
        }
      } finally {
        unsubscribe();
      }
    });
  });
  return routes;
}
