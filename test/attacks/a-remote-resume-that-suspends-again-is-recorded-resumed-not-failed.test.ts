// Adversary: none needed — an approver's ordinary edit (or any resolution after which the
// resumed run waits for people again) against the record the resumer keeps for a graph on
// LangGraph's Agent Server.
// Guarantee (README "Resuming runs when approvals resolve"; the resumer's `ResumeOutcome`, and
// `the-inbox-says-resumed-only-for-a-run-that-was-resumed`): a resolution the resumer continued
// is recorded `resumed` (`resume_outcome`, the `run_resumed` event), and `failed` only when the
// resume threw.
// Steps: 1. a client starts a `refunds` run; it suspends on approval A (500.00). 2. Alice edits
// A to 300.00 (a signed edit): the edited call is a new proposal that needs approval again.
// 3. The example resumer resumes the thread through `RemoteGraph`; the run re-plans, opens the
// revision's request and suspends on it — and `RemoteGraph.invoke` throws `GraphInterrupt` for
// a run that ends in an interrupt (`@langchain/langgraph/dist/pregel/remote.js`), which
// `resumeThread` passes on. The resumer records the attempt `failed` (resume_error set, backoff),
// tries again, finds the thread suspended on the revision's request, and records A
// `not_waiting` — its `run_resumed` event says the run was not resumed although it was, and
// every resolution that leads to another wait spends an attempt and logs a failure.
// Severity: low (the run and the gate are right; the record and the retry budget are not).
// Suggested fix (mechanism): in `resumeThread` (or the resumer), treat a `GraphInterrupt` from
// the graph's `invoke` as the run having suspended again — the thread was resumed — as a local
// graph returns its interrupt value instead of throwing.
import { Client } from '@langchain/langgraph-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApprovalManager } from '../../src/approvals/index.js';
import { AuditLog, PostgresAuditStore } from '../../src/audit/index.js';
import { migrate } from '../../src/db/index.js';
import {
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

describe.skipIf(!postgresUrl)(
  'a remote resume that suspends again is recorded resumed, not failed',
  () => {
    let database: OpenedBackend;
    let deployment: Awaited<ReturnType<typeof startDeployment>>;
    let client: Client;
    let audit: AuditLog;
    let approvals: ApprovalManager;

    beforeAll(
      async () => {
        database = await openBackend('postgres');
        await migrate(database.db);
        audit = new AuditLog({ store: new PostgresAuditStore(database.db) });
        approvals = approvalsIn(database.db);
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

    it('an edit that needs approval again is resumed once and recorded resumed', async () => {
      const thread = await client.threads.create();
      await client.runs.wait(thread.thread_id, 'refunds', {
        input: { messages: [{ role: 'user', content: 'refund E-1 500.00' }] },
      });
      const [pending] = await approvals.listPending({ threadId: thread.thread_id });
      await approvals.decide(
        pending!.id,
        signAs(pending!, 'alice', 'edit', { editedArgs: { orderId: 'E-1', amount: '300.00' } }),
      );
      const row = await until(
        'the resumer to record the edit resumed',
        async () => {
          const { rows } = await database.db.query<{
            resumed_at: Date | null;
            resume_outcome: string | null;
          }>('SELECT resumed_at, resume_outcome FROM veridex_approvals WHERE id = $1', [
            pending!.id,
          ]);
          return rows[0]?.resumed_at ? rows[0] : undefined;
        },
        120_000,
        deployment.logs,
      );
      // The run did go on: it now waits on the edited call's own request.
      const revision = await approvals.listPending({ threadId: thread.thread_id });
      expect(revision.map((request) => request.proposalHash)).not.toContain(pending!.proposalHash);
      expect(revision).toHaveLength(1);
      const resumed = (await audit.events(thread.thread_id)).find(
        (event) => event.type === 'run_resumed',
      );
      // (A transient failure under load may be retried first; without the fix the resume that
      // suspends again is recorded failed, then not_waiting — never resumed.)
      expect(row.resume_outcome).toBe('resumed');
      expect((resumed?.payload as { outcome?: string } | undefined)?.outcome).toBe('resumed');
    }, 300_000);
  },
);
