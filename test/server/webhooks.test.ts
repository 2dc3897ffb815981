import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { ApprovalManager } from '../../src/approvals/index.js';
import { AuditLog, PostgresAuditStore } from '../../src/audit/index.js';
import { PostgresApproverDirectory } from '../../src/identity/index.js';
import { ApprovalFeed, type InboxEvent, WebhookDispatcher } from '../../src/server/index.js';
import { signAs, testApproverInits } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';
import { startTestInbox, type TestInbox } from '../support/inbox.js';
import { approvalsIn, escalate, transferProposal } from '../support/proposals.js';

const secret = () => `whsec_${randomBytes(32).toString('base64')}`;

/** A real HTTP receiver on 127.0.0.1 that verifies every message and answers from a script. */
async function receiver(secretText: string, answers: number[] = []) {
  const verifier = new Webhook(secretText);
  const received: Array<{
    id: string;
    type: string;
    data: Record<string, unknown>;
    verified: boolean;
  }> = [];
  const waiters = new Set<() => void>();
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      let verified = true;
      let payload: { type: string; data: Record<string, unknown> } = { type: '?', data: {} };
      try {
        payload = verifier.verify(
          body,
          request.headers as Record<string, string>,
        ) as typeof payload;
      } catch {
        verified = false;
      }
      received.push({
        id: String(request.headers['webhook-id']),
        type: payload.type,
        data: payload.data,
        verified,
      });
      response.statusCode = answers.shift() ?? 204;
      response.end();
      for (const wake of waiters) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return {
    url,
    received,
    until: (condition: () => boolean, timeoutMs = 30_000) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (condition()) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve();
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`receiver: condition not met; got ${JSON.stringify(received)}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('webhook configuration', () => {
  it('refuses a weak secret or a non-http URL', () => {
    const db = {} as never;
    expect(
      () =>
        new WebhookDispatcher(db, {
          endpoints: [{ url: 'http://127.0.0.1/x', secret: 'whsec_c2hvcnQ=' }],
        }),
    ).toThrow(/secret/);
    expect(
      () => new WebhookDispatcher(db, { endpoints: [{ url: 'ftp://x/', secret: secret() }] }),
    ).toThrow(/http/);
  });
});

describeEachDatabase('webhooks', (context) => {
  let inbox: TestInbox | undefined;
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    await inbox?.close();
    inbox = undefined;
    for (const close of closers.splice(0)) await close();
  });

  it('delivers signed events to a real receiver, retries with backoff, and logs every delivery', async () => {
    const key = secret();
    const hooks = await receiver(key, [500, 503]);
    closers.push(hooks.close);
    const delays: number[] = [];
    inbox = await startTestInbox(context.db(), {
      webhooks: {
        endpoints: [{ url: hooks.url, secret: key }],
        backoffMs: (failed) => {
          delays.push(failed);
          return 20 * 2 ** failed;
        },
        pollIntervalMs: 25,
      },
    });
    await inbox.server.inbox.ready;
    await inbox.server.inbox.feed.poll();
    const request = await inbox.manager.request(
      transferProposal('th-hook'),
      escalate('human_required'),
    );
    await hooks.until(
      () => hooks.received.filter((m) => m.type === 'approval_requested').length >= 3,
    );
    const { token } = await inbox.login('bob');
    const decided = await inbox.call(`/api/approvals/${request.id}/decisions`, {
      method: 'POST',
      token,
      body: JSON.stringify(signAs(request, 'bob')),
    });
    expect(decided.status).toBe(200);
    await hooks.until(() => hooks.received.some((m) => m.type === 'approval_decided'));

    expect(hooks.received.every((message) => message.verified)).toBe(true);
    const requested = hooks.received.filter((m) => m.type === 'approval_requested');
    // 500, 503, then accepted: three attempts of one message, same id each time.
    expect(requested.map((m) => m.id)).toEqual(Array(3).fill(`approval_requested:${request.id}`));
    expect(requested[0]!.data).toMatchObject({ approvalId: request.id, status: 'pending' });
    expect(delays).toEqual([1, 2]);
    const decidedMessage = hooks.received.find((m) => m.type === 'approval_decided')!;
    expect(decidedMessage.data).toMatchObject({
      status: 'approved',
      decision: { approver: 'bob' },
    });

    const admin = await inbox.login('alice');
    const log = (await (
      await inbox.call('/api/webhooks/deliveries', { token: admin.token })
    ).json()) as {
      items: Array<{ messageId: string; status: string; attempts: number; lastStatus?: number }>;
    };
    const first = log.items.find((item) => item.messageId === `approval_requested:${request.id}`);
    expect(first).toMatchObject({ status: 'delivered', attempts: 3, lastStatus: 204 });
    expect((await inbox.call('/api/webhooks/deliveries', { token })).status).toBe(403);
  });

  it('gives up after maxAttempts against a receiver that is down, and says why', async () => {
    const key = secret();
    const hooks = await receiver(key);
    await hooks.close(); // nothing listens on this port any more
    const dispatcher = new WebhookDispatcher(context.db(), {
      endpoints: [{ url: hooks.url, secret: key }],
      maxAttempts: 3,
      backoffMs: () => 0,
    });
    await dispatcher.enqueue({
      id: 'approval_expired:apr_x',
      type: 'approval_expired',
      approvalId: 'apr_x',
      threadId: 't',
      status: 'expired',
      approvals: 0,
      requiredApprovals: 1,
      at: new Date().toISOString(),
    });
    for (let attempt = 0; attempt < 4; attempt++) await dispatcher.deliverDue();
    const [delivery] = await dispatcher.deliveries();
    expect(delivery).toMatchObject({ status: 'failed', attempts: 3, lastError: 'network error' });
  });

  it('delivers each event once even with two service instances on one database', async () => {
    const key = secret();
    const hooks = await receiver(key);
    closers.push(hooks.close);
    const db = context.db();
    const directory = new PostgresApproverDirectory(db);
    for (const init of testApproverInits(['alice'])) await directory.add(init);
    const audit = new AuditLog({ store: new PostgresAuditStore(db) });
    const manager = new ApprovalManager({ db, audit, approvers: directory });
    const instances = [db, await context.open()].map((handle) => {
      const feed = new ApprovalFeed(handle, approvalsIn(handle, { approvers: directory }));
      const dispatcher = new WebhookDispatcher(handle, {
        endpoints: [{ url: hooks.url, secret: key }],
      });
      const seen: InboxEvent[] = [];
      feed.subscribe((event) => seen.push(event));
      return { feed, dispatcher, seen };
    });
    for (const { feed } of instances) await feed.poll();
    const open = async (from: number) => {
      const opened = [];
      for (let index = from; index < from + 5; index++) {
        opened.push(
          await manager.request(
            transferProposal('th-two', `call_${index}`),
            escalate('human_required'),
          ),
        );
      }
      return opened.map((request) => `approval_requested:${request.id}`);
    };
    const enqueueAll = async (instance: (typeof instances)[number]) => {
      await instance.feed.poll();
      for (const event of instance.seen.splice(0)) await instance.dispatcher.enqueue(event);
    };
    // The first instance sees and delivers five events; the second sees them later and
    // enqueues them again: nothing is sent twice.
    const first = await open(0);
    await enqueueAll(instances[0]!);
    await instances[0]!.dispatcher.deliverDue();
    await enqueueAll(instances[1]!);
    await Promise.all(instances.map(({ dispatcher }) => dispatcher.deliverDue()));
    // Five more, enqueued by both, delivered by both at once: each claimed by one.
    const second = await open(5);
    await Promise.all(instances.map(enqueueAll));
    await Promise.all(
      instances.flatMap(({ dispatcher }) => [dispatcher.deliverDue(), dispatcher.deliverDue()]),
    );
    await hooks.until(() => hooks.received.length >= 10);
    expect(hooks.received.map((m) => m.id).sort()).toEqual([...first, ...second].sort());
  });
});
