// Adversary: an insider with psql (no keys) on the database an Agent Server deployment's
// governance shares — here beside a second graph on the same server (another team's help-desk
// agent, `helpdesk`, with a human gate of its own).
// Guarantee (README "Resuming runs when approvals resolve" / "Deploying on LangGraph's Agent
// Server"): a resumer takes only requests its own agent raised and continues only its own
// agent's threads; it "skips threads its graph does not hold".
// Steps: 1. a client starts a `refunds` run; it suspends on an approval (row P, proposer
// refund-bot). 2. Another team's `helpdesk` run on the same server suspends in its own gate
// (a plain `interrupt()` before its `tools` node answers a 60.00 refund call). 3. The insider
// runs `UPDATE veridex_approvals SET thread_id = <helpdesk thread>, status = 'rejected'` on P.
// 4. The example resumer (`RemoteGraph({ graphId: 'refunds' })`) claims P (its proposer is
// refund-bot); `getState` finds the help-desk thread on the server (a server's threads are not
// bound to a graph, so the "thread its graph does not hold" check never fires); the thread is
// due to run and suspended on no veridex approval, so `resumeThread` calls `invoke(null)` and
// the server runs the `refunds` assistant on the help-desk thread. Its governed `tools` node
// takes the help desk's pending call as refund-bot's: the help desk's own gate is gone, and a
// refund-bot request for "refund H-1 60" (thread = the help-desk thread) waits in the
// approvers' queue — approved there as an ordinary refund-bot request, the resumer runs the
// refund on the help desk's thread. (Measured: a second run, by the refunds assistant, on the
// help-desk thread; its interrupt is now `veridex.approvals`; a new refund-bot row for it.)
// The same with another governed agent (payout-bot) on the server: the insider sets the
// proposer of payout-bot's request to refund-bot; once Alice approves it, the refund-bot
// resumer claims it and runs the `refunds` assistant on payout-bot's thread, whose governed node
// finds the same approval (same thread, call id and proposal hash: the hash binds neither the
// agent nor the graph) and runs refunds' tool implementation in place of payout-bot's.
// Severity: medium (needs write access to the database; another team's thread is taken over by
// the refunds graph and its gate replaced; the refund itself still needs a signed approval).
// Suggested fix (mechanism): treat the row's thread_id/proposer as claims. Before resuming,
// prove the claimed request belongs to the thread from the hash-chained audit log (the
// thread's `approval_requested` event for that approval id, proposer and proposal hash), and
// for a RemoteGraph bind the thread to the deployed graph (the thread's metadata
// `graph_id`/`assistant_id`, or the run that raised the interrupt): resume only a thread whose
// snapshot is suspended on that very approval, or — for the "due to run" path — whose audit
// log shows the approval's call step cut short; otherwise release the row as `not_ours`.
import { Client } from '@langchain/langgraph-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/index.js';
import {
  type OpenedBackend,
  openBackend,
  START_MS,
  startDeployment,
  twoGraphsDir,
  until,
} from '../support/agent-server.js';
import { signAs, testApproverInits } from '../support/approvers.js';
import { postgresUrl } from '../support/databases.js';
import { approvalsIn } from '../support/proposals.js';

describe.skipIf(!postgresUrl)(
  "a resumer on an Agent Server never runs its graph on another graph's thread",
  () => {
    let database: OpenedBackend;
    let deployment: Awaited<ReturnType<typeof startDeployment>>;
    let client: Client;

    beforeAll(
      async () => {
        database = await openBackend('postgres');
        await migrate(database.db);
        const approvals = approvalsIn(database.db);
        for (const init of testApproverInits(['alice'])) await approvals.directory.add(init);
        deployment = await startDeployment(twoGraphsDir, database.url);
        client = new Client({ apiUrl: deployment.apiUrl });
      },
      2 * START_MS + 30_000,
    );

    afterAll(async () => {
      await deployment?.stop();
      await database?.close();
    }, 60_000);

    it("an insider moving a refund-bot row onto the help desk's thread does not make the resumer run refunds there", async () => {
      const refunds = await client.threads.create();
      const first = (await client.runs.wait(refunds.thread_id, 'refunds', {
        input: { messages: [{ role: 'user', content: 'refund A-1 500.00' }] },
      })) as { __interrupt__?: unknown[] };
      expect(first.__interrupt__, deployment.logs()).toHaveLength(1);
      const { rows } = await database.db.query<{ id: string }>(
        'SELECT id FROM veridex_approvals WHERE thread_id = $1',
        [refunds.thread_id],
      );
      const rowId = rows[0]!.id;

      const helpdesk = await client.threads.create();
      const asked = (await client.runs.wait(helpdesk.thread_id, 'helpdesk', {
        input: { messages: [{ role: 'user', content: 'my order H-1 arrived broken' }] },
      })) as { __interrupt__?: unknown[] };
      expect(asked.__interrupt__, deployment.logs()).toHaveLength(1);
      expect((await client.threads.getState(helpdesk.thread_id)).next).toEqual(['tools']);

      // The insider: no key, one UPDATE.
      await database.db.query(
        `UPDATE veridex_approvals SET thread_id = $1, status = 'rejected', decided_at = now()
         WHERE id = $2`,
        [helpdesk.thread_id, rowId],
      );
      // The resumer handles the row (it logs each outcome with the thread id).
      await until(
        'the resumer to handle the moved row',
        async () => (deployment.resumerOutput().includes(helpdesk.thread_id) ? true : undefined),
        60_000,
        deployment.logs,
      );
      await new Promise((resolve) => setTimeout(resolve, 3000));

      const [helpdeskAssistant] = await client.assistants.search({ graphId: 'helpdesk' });
      const runs = await client.runs.list(helpdesk.thread_id);
      const state = await client.threads.getState(helpdesk.thread_id);
      const interrupts = state.tasks.flatMap((task) => task.interrupts ?? []);
      const opened = await database.db.query<{ id: string; proposer: string }>(
        'SELECT id, proposer FROM veridex_approvals WHERE thread_id = $1 AND id <> $2',
        [helpdesk.thread_id, rowId],
      );
      const detail = `${deployment.resumerOutput()}\n${JSON.stringify(interrupts).slice(0, 1500)}`;
      // Secure: only the help desk's own assistant ever ran on its thread …
      expect(
        runs.map((run) => run.assistant_id),
        detail,
      ).toEqual(runs.map(() => helpdeskAssistant!.assistant_id));
      // … refund-bot opened no request there (today: a refund of H-1 in Alice's queue, which,
      // approved, the resumer runs on the help desk's thread) …
      expect(opened.rows, detail).toEqual([]);
      // … and the thread still waits at the help desk's own gate, not at a veridex approval.
      expect(interrupts.map((pending) => (pending.value as { type?: string }).type)).toEqual([
        undefined,
      ]);
      expect(state.next).toEqual(['tools']);
    }, 300_000);

    it("an insider relabelling another governed agent's approved request as refund-bot's does not make the resumer run refunds on that agent's thread", async () => {
      // payout-bot (./fixtures/agent-server-two-graphs/payouts-graph.ts) waits for approval Q;
      // Alice approves it, for payout-bot's graph to run.
      const payouts = await client.threads.create();
      await client.runs.wait(payouts.thread_id, 'payouts', {
        input: { messages: [{ role: 'user', content: 'refund P-9 900.00' }] },
      });
      const [pending] = await approvalsIn(database.db).listPending({
        threadId: payouts.thread_id,
      });
      // The insider: one UPDATE of the proposer column, before anyone resumes it.
      await database.db.query(
        `UPDATE veridex_approvals SET proposer = 'refund-bot' WHERE id = $1`,
        [pending!.id],
      );
      await approvalsIn(database.db).decide(pending!.id, signAs(pending!, 'alice'));
      await until(
        'the resumer to handle the relabelled row',
        async () => (deployment.resumerOutput().includes(payouts.thread_id) ? true : undefined),
        60_000,
        deployment.logs,
      );
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const [payoutsAssistant] = await client.assistants.search({ graphId: 'payouts' });
      const runs = await client.runs.list(payouts.thread_id);
      // Secure: only payout-bot's own assistant ever runs on its thread.
      expect(
        runs.map((run) => run.assistant_id),
        deployment.resumerOutput(),
      ).toEqual(runs.map(() => payoutsAssistant!.assistant_id));
    }, 300_000);
  },
);
