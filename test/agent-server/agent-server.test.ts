// LangGraph's Agent Server, for real: `langgraphjs dev` (@langchain/langgraph-cli) serves
// examples/agent-server/graph.ts, a client drives it through @langchain/langgraph-sdk, and the
// example's resumer (examples/agent-server/resumer.ts, its own process) continues the run when
// an approval is decided out of band — no client sends a resume (README "Deploying on
// LangGraph's Agent Server"). Both backends: PostgreSQL through a schema URL, and PGlite shared
// by this process through its socket (`expose`).
import { Client } from '@langchain/langgraph-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApprovalManager } from '../../src/approvals/index.js';
import { AuditLog, PostgresAuditStore } from '../../src/audit/index.js';
import { migrate } from '../../src/db/index.js';
import {
  type BackendName,
  exampleDir,
  type OpenedBackend,
  openBackend,
  START_MS,
  startDeployment,
  until,
} from '../support/agent-server.js';
import { signAs, testApproverInits } from '../support/approvers.js';
import { postgresUrl } from '../support/databases.js';
import { approvalsIn } from '../support/proposals.js';

const inCi = process.env.CI === 'true' || process.env.CI === '1';
const backends: BackendName[] = ['postgres', 'pglite'];

for (const backend of backends) {
  const title = `a governed graph on LangGraph's Agent Server [${backend}]`;
  if (backend === 'postgres' && !postgresUrl) {
    if (inCi) {
      it(`${title}: runs against PostgreSQL (DATABASE_URL must be set in CI)`, () => {
        throw new Error('DATABASE_URL is not set: CI must run the database suites on PostgreSQL.');
      });
    } else {
      describe.skip(`${title} — skipped: set DATABASE_URL to run on PostgreSQL`, () => {
        it('needs DATABASE_URL', () => undefined);
      });
    }
    continue;
  }

  describe(title, () => {
    let database: OpenedBackend;
    let approvals: ApprovalManager;
    let audit: AuditLog;
    let deployment: Awaited<ReturnType<typeof startDeployment>> | undefined;
    let client: Client;
    const logs = () => deployment?.logs() ?? '';

    beforeAll(
      async () => {
        database = await openBackend(backend);
        await migrate(database.db);
        audit = new AuditLog({ store: new PostgresAuditStore(database.db) });
        approvals = approvalsIn(database.db);
        // `veridex approvers add alice --key alice.pub`, in the database the deployment shares.
        for (const init of testApproverInits(['alice'])) await approvals.directory.add(init);
        deployment = await startDeployment(exampleDir, database.url);
        client = new Client({ apiUrl: deployment.apiUrl });
      },
      2 * START_MS + 30_000,
    );

    afterAll(async () => {
      await deployment?.stop();
      await database?.close();
    }, 60_000);

    async function suspendedRun(orderId: string, amount: string) {
      const thread = await client.threads.create();
      const first = (await client.runs.wait(thread.thread_id, 'refunds', {
        input: { messages: [{ role: 'user', content: `refund ${orderId} ${amount}` }] },
      })) as { __interrupt__?: unknown[] };
      expect(first.__interrupt__, logs()).toHaveLength(1);
      const [pending] = await approvals.listPending({ threadId: thread.thread_id });
      expect(pending, logs()).toBeDefined();
      return { threadId: thread.thread_id, pending: pending! };
    }

    /** The thread's last message once the server's run has finished it. */
    async function finished(threadId: string) {
      return until(
        `thread ${threadId} to finish`,
        async () => {
          const state = await client.threads.getState(threadId);
          const messages = (
            state.values as { messages?: Array<{ type: string; content: unknown }> }
          ).messages;
          const last = messages?.at(-1);
          return state.next.length === 0 && last?.type === 'ai' ? last : undefined;
        },
        120_000,
        logs,
      );
    }

    async function eventTypes(threadId: string) {
      return (await audit.events(threadId)).map((event) => event.type);
    }

    /** The thread's events once the resumer recorded its resume (after the run it resumed). */
    async function resumedEvents(threadId: string) {
      return until(
        `the resumer to record run_resumed on ${threadId}`,
        async () => {
          const types = await eventTypes(threadId);
          return types.includes('run_resumed') ? types : undefined;
        },
        60_000,
        logs,
      );
    }

    it('an approval decided out of band resumes the run on the server: the refund runs once, no client resumes', async () => {
      const { threadId, pending } = await suspendedRun('A-7', '250.00');
      expect(await eventTypes(threadId)).not.toContain('tool_executed');
      // Alice approves where she is (the inbox, `veridex approvals approve`): a signed decision.
      await approvals.decide(pending.id, signAs(pending, 'alice'));
      const last = await finished(threadId);
      expect(String(last.content)).toBe('Done: {"refundId":"rf_A-7"}');
      const types = await resumedEvents(threadId);
      expect(types.filter((type) => type === 'tool_executed')).toHaveLength(1);
      expect((await audit.verify(threadId)).valid).toBe(true);
    }, 300_000);

    it('a client resumes with a signed decision through the SDK: governance events on the custom stream, the governed call in the events stream, one refund', async () => {
      const { threadId, pending } = await suspendedRun('A-9', '300.00');
      // The approver's client signs and resumes itself (the resumer finds the request resumed).
      const seen: Array<{ event: string; data: unknown }> = [];
      for await (const part of client.runs.stream(threadId, 'refunds', {
        command: { resume: signAs(pending, 'alice') },
        streamMode: ['custom', 'events'],
      })) {
        seen.push(part as { event: string; data: unknown });
      }
      const custom = seen
        .filter((part) => part.event.startsWith('custom'))
        .map((part) => (part.data as { event?: string }).event);
      expect(custom, logs()).toContain('call_executed');
      const toolEvents = seen
        .filter((part) => part.event.startsWith('events'))
        .map((part) => part.data as { event?: string; name?: string })
        .filter((data) => data.name === 'refund')
        .map((data) => data.event);
      expect(toolEvents).toEqual(expect.arrayContaining(['on_tool_start', 'on_tool_end']));
      const last = await finished(threadId);
      expect(String(last.content)).toBe('Done: {"refundId":"rf_A-9"}');
      const types = await eventTypes(threadId);
      expect(types.filter((type) => type === 'tool_executed')).toHaveLength(1);
    }, 300_000);

    it('a rejection decided out of band ends the run on the server without the refund', async () => {
      const { threadId, pending } = await suspendedRun('A-8', '900.00');
      await approvals.decide(
        pending.id,
        signAs(pending, 'alice', 'reject', { reason: 'not this one' }),
      );
      const last = await finished(threadId);
      expect(String(last.content)).toMatch(/^Done: .*not this one/);
      const types = await resumedEvents(threadId);
      expect(types).not.toContain('tool_executed');
    }, 300_000);
  });
}
