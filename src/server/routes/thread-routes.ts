import { Hono } from 'hono';
import { latestEvidence } from '../../audit/index.js';
import { VeridexError } from '../../errors/index.js';
import { requireSession } from '../authenticate.js';
import { badInput } from '../http-error.js';
import type { InboxContext, InboxEnv } from '../inbox-context.js';
import { pageLimit } from '../pagination.js';
import { runView } from '../run-view.js';

/**
 * `GET /api/threads/:id/events` (a thread's audit trail, oldest first, paginated by position),
 * `/run` (its conversation) and `/evidence` (its latest sealed bundle).
 */
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
  // The thread's latest sealed bundle, as stored: `veridex verify <this URL>` checks it against
  // the keys the auditor trusts; the server's copy proves nothing by itself.
  routes.get('/api/threads/:id/evidence', requireSession(inbox), async (c) => {
    const threadId = c.req.param('id');
    const stored = await latestEvidence(inbox.db, threadId);
    if (!stored) {
      throw new VeridexError(
        'thread_not_found',
        `Thread "${threadId.slice(0, 100)}" has no sealed evidence bundle in this database.`,
      );
    }
    c.header('etag', `"${stored.bundleHash}"`);
    c.header('x-veridex-sealed-at', stored.sealedAt);
    return c.json(stored.bundle);
  });
  return routes;
}
