import { Hono } from 'hono';
import { VeridexError } from '../../errors/index.js';
import { requireSession } from '../authenticate.js';
import { badInput } from '../http-error.js';
import type { InboxContext, InboxEnv } from '../inbox-context.js';
import { pageLimit } from '../pagination.js';
import { runView } from '../run-view.js';

/** `GET /api/threads/:id/events`: a thread's audit trail, oldest first, paginated by position. */
export function threadRoutes(inbox: InboxContext): Hono<InboxEnv> {
  const routes = new Hono<InboxEnv>();
  routes.get('/api/threads/:id/events', requireSession(inbox), async (c) => {
    const threadId = c.req.param('id');
    const afterText = c.req.query('after');
    const after = afterText === undefined ? 0 : Number(afterText);
    if (!Number.isInteger(after) || after < 0)
      throw badInput('after must be a position (0 or more)');
    const limit = pageLimit(c.req.query('limit') ?? '100');
    const events = await inbox.audit.events(threadId);
    if (events.length === 0) {
      throw new VeridexError(
        'thread_not_found',
        `Thread "${threadId.slice(0, 100)}" has no audit events.`,
      );
    }
    await inbox.audit.scrubber.refresh();
    const page = events.slice(after, after + limit);
    return c.json({
      threadId,
      total: events.length,
      // Events are shown as stored (already scrubbed when appended), so their hashes verify.
      items: page,
      next: after + page.length < events.length ? after + page.length : null,
    });
  });
  routes.get('/api/threads/:id/run', requireSession(inbox), async (c) =>
    c.json(await runView(inbox, c.req.param('id'))),
  );
  return routes;
}
