import { Hono } from 'hono';
import type { ApprovalRequest, ApprovalStatus, DecisionInput } from '../../approvals/index.js';
import { type ApprovalRow, approvalFromRow } from '../../approvals/postgres-approval-store.js';
import { COLUMNS } from '../../approvals/sql.js';
import { VeridexError } from '../../errors/index.js';
import {
  describeMalformedSignedDecision,
  type SignedDecision,
  sameIdentity,
} from '../../identity/index.js';
import {
  type ApprovalDetailView,
  approvalView,
  resumptionView,
  traceUpTo,
} from '../approval-view.js';
import { requireSession } from '../authenticate.js';
import { badInput } from '../http-error.js';
import type { InboxContext, InboxEnv } from '../inbox-context.js';
import { decodeCursor, encodeCursor, pageLimit } from '../pagination.js';
import type { Passkeys } from '../passkeys.js';
import { jsonBody } from '../request-body.js';
import { lastMessages } from '../run-view.js';
import { recordRefusal } from '../security-events.js';
import { listApprovalsSql, RESERVE_NONCE, SELECT_RESUMPTION } from '../sql.js';

const STATUSES = new Set<ApprovalStatus | 'all'>([
  'pending',
  'approved',
  'rejected',
  'edited',
  'expired',
  'all',
]);
const LIST_SQL = listApprovalsSql(COLUMNS);

/** The approvals endpoints: list, detail, and posting a signed decision. */
export function approvalRoutes(inbox: InboxContext, passkeys: Passkeys): Hono<InboxEnv> {
  const routes = new Hono<InboxEnv>();
  routes.use('/api/approvals', requireSession(inbox));
  routes.use('/api/approvals/*', requireSession(inbox));

  routes.get('/api/approvals', async (c) => {
    const status = c.req.query('status') ?? 'pending';
    if (!STATUSES.has(status as ApprovalStatus)) {
      throw badInput(`status must be one of ${[...STATUSES].join(', ')}`);
    }
    const thread = c.req.query('thread');
    if (thread !== undefined && (thread === '' || thread.length > 200)) {
      throw badInput('thread must be a thread id');
    }
    const scope = c.req.query('scope') ?? 'all';
    if (scope !== 'all' && scope !== 'mine') throw badInput('scope must be "all" or "mine"');
    const limit = pageLimit(c.req.query('limit'));
    const cursor = decodeCursor(c.req.query('cursor'));
    // Deadlines that passed become `expired` before anyone sees the list.
    await inbox.approvals.sweep();
    let page: ApprovalRequest[];
    if (scope === 'mine') {
      // What this approver may decide now: pending only, by the manager's own rules.
      const mine = await inbox.approvals.listPending({
        approver: c.get('session').approverId,
        ...(thread ? { threadId: thread } : {}),
      });
      page = mine
        .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id))
        .filter((request) => !cursor || before(request, cursor))
        .slice(0, limit + 1);
    } else {
      const { rows } = await inbox.db.query<ApprovalRow>(LIST_SQL, [
        status === 'all' ? null : status,
        thread ?? null,
        cursor?.createdAt ?? null,
        cursor?.id ?? null,
        limit + 1,
      ]);
      page = rows.map(approvalFromRow);
    }
    await inbox.audit.scrubber.refresh();
    const items = page.slice(0, limit);
    const last = items.at(-1);
    // Each proposal only as bound to its hash; one that is not is listed with nothing of it.
    const views = [];
    for (const request of items) {
      const shown = await inbox.approvals.shownProposal(request);
      views.push(approvalView(request, inbox.audit.scrubber, shown));
    }
    return c.json({
      items: views,
      nextCursor: page.length > limit && last ? encodeCursor(last) : null,
    });
  });

  routes.get('/api/approvals/:id', async (c) => {
    const request = await inbox.approvals.require(c.req.param('id'));
    // The detail view is where approvers read the arguments and decide: a request whose stored
    // proposal is not bound to its hash is refused (`proposal_tampered`, a security_event).
    const shown = await inbox.approvals.requireShownProposal(request);
    await inbox.audit.scrubber.refresh();
    const mine = await inbox.approvals.listPending({
      approver: c.get('session').approverId,
      threadId: request.threadId,
    });
    // The thread's log, read once: the trace shown and whether a resumer continued the run.
    const events = await inbox.audit.events(request.threadId);
    const detail: ApprovalDetailView & { mayDecide: boolean } = {
      ...approvalView(request, inbox.audit.scrubber, shown),
      mayDecide: mine.some((candidate) => candidate.id === request.id),
      trace: traceUpTo(events, request.id, inbox.audit.scrubber),
      reasoning: await lastMessages(inbox, request.threadId),
    };
    if (request.status !== 'pending') {
      const { rows } = await inbox.db.query<{
        resumed_at: Date | null;
        resume_outcome: string | null;
        resume_error: string | null;
      }>(SELECT_RESUMPTION, [request.id]);
      // "Resumed" only where the hash-chained log records it; the columns are bookkeeping.
      const logged = events.find(
        (event) => event.type === 'run_resumed' && event.payload.approvalId === request.id,
      );
      if (rows[0]) detail.resumption = resumptionView(rows[0], logged);
    }
    return c.json(detail);
  });

  routes.post('/api/approvals/:id/decisions', async (c) => {
    const id = c.req.param('id');
    const session = c.get('session');
    const body = await jsonBody(c);
    const request = await inbox.approvals.require(id);
    const refuse = async (error: VeridexError) => {
      await recordRefusal(inbox, error, {
        route: 'POST /api/approvals/:id/decisions',
        threadId: request.threadId,
        approvalId: id,
        approver: session.approverId,
      });
      return error;
    };
    // A signed-in approver's malformed decision (an edit nested thousands deep included) is a
    // refusal like any other: recorded, and answered 400 before anything recurses over it.
    const malformed = describeMalformedSignedDecision(body);
    if (malformed) {
      throw await refuse(
        new VeridexError(
          'resume_payload_invalid',
          `Malformed signed decision: ${malformed}. Bare decisions are not accepted over HTTP: sign it (signDecision, a passkey in the inbox, or \`veridex approvals approve --key\`).`,
        ),
      );
    }
    const signed = body as unknown as DecisionInput & {
      statement: { approver: string; approvalId: string; nonce: string };
    };
    if (!sameIdentity(signed.statement.approver, session.approverId)) {
      throw await refuse(
        new VeridexError(
          'session_mismatch',
          `You are signed in as "${session.approverId}", but the decision is signed as "${signed.statement.approver.slice(0, 80)}": each approver posts their own decisions.`,
        ),
      );
    }
    try {
      await inbox.approvals.requireShownProposal(request);
    } catch (error) {
      throw VeridexError.is(error) ? await refuse(error) : error;
    }
    if (signed.statement.approvalId !== id) {
      throw await refuse(
        new VeridexError(
          'decision_mismatch',
          `The decision was signed for approval ${signed.statement.approvalId.slice(0, 80)}, not ${id}.`,
        ),
      );
    }
    // One statement, one use: the nonce is taken before the decision is applied, so the same
    // signed decision posted twice (or by two racing requests) is refused the second time.
    const reserved = await inbox.db.query(RESERVE_NONCE, [
      id,
      signed.statement.nonce,
      inbox.now().toISOString(),
    ]);
    if (reserved.rowCount === 0) {
      throw await refuse(
        new VeridexError(
          'decision_nonce_reused',
          `This signed decision (nonce ${signed.statement.nonce}) was already posted for approval ${id}; it counts once. Sign a new decision to decide again.`,
        ),
      );
    }
    if ((signed as SignedDecision).webauthn !== undefined) {
      try {
        await passkeys.checkDecision(session.approver, id, signed as SignedDecision);
      } catch (error) {
        throw VeridexError.is(error) ? await refuse(error) : error;
      }
    }
    const decided = await inbox.approvals.decide(id, signed);
    await inbox.feed.poll().catch(() => undefined);
    await inbox.audit.scrubber.refresh();
    return c.json(
      approvalView(decided, inbox.audit.scrubber, await inbox.approvals.shownProposal(decided)),
    );
  });

  return routes;
}

function before(request: ApprovalRequest, cursor: { createdAt: string; id: string }): boolean {
  const created = Date.parse(request.createdAt);
  const at = Date.parse(cursor.createdAt);
  return created < at || (created === at && request.id < cursor.id);
}
