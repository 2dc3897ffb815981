// The defended attempts of the Agent Server pass (README "Deploying on LangGraph's Agent
// Server", "Resuming runs when approvals resolve"): a client of the server's API (no auth in
// `langgraphjs dev`), an insider with psql and a second governed agent on the same server
// (test/attacks/fixtures/agent-server-two-graphs: examples/agent-server's `refunds` beside
// `payouts`, agentId payout-bot) against the real server, with the example's resumer
// (`RemoteGraph`, refund-bot) running beside it. One server per backend for the whole file. Guarantees: a governed call runs only after its quorum is proven from signed
// decisions, at most once, with the approved arguments. The working attack of the pass is in
// a-resumer-on-an-agent-server-never-runs-its-graph-on-another-graphs-thread.open-attack.ts.
import { Client } from '@langchain/langgraph-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApprovalManager } from '../../src/approvals/index.js';
import { AuditLog, PostgresAuditStore } from '../../src/audit/index.js';
import { migrate } from '../../src/db/index.js';
import {
  type BackendName,
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

const RECHECK = { type: 'veridex.recheck' };
const TEST_MS = 300_000;

interface Message {
  type: string;
  content: unknown;
  id?: string;
  tool_calls?: Array<{ name: string; args: Record<string, unknown>; id: string }>;
}

for (const backend of ['postgres', 'pglite'] as BackendName[]) {
  describe.skipIf(backend === 'postgres' && !postgresUrl)(
    `the Agent Server deployment holds against clients, forks and insiders [${backend}]`,
    () => {
      let database: OpenedBackend;
      let deployment: Awaited<ReturnType<typeof startDeployment>>;
      let client: Client;
      let audit: AuditLog;
      let approvals: ApprovalManager;
      const logs = () => deployment?.logs() ?? '';

      beforeAll(
        async () => {
          database = await openBackend(backend);
          await migrate(database.db);
          audit = new AuditLog({ store: new PostgresAuditStore(database.db) });
          approvals = approvalsIn(database.db);
          for (const init of testApproverInits(['alice', 'bob']))
            await approvals.directory.add(init);
          deployment = await startDeployment(twoGraphsDir, database.url);
          client = new Client({ apiUrl: deployment.apiUrl });
        },
        2 * START_MS + 30_000,
      );

      afterAll(async () => {
        await deployment?.stop();
        await database?.close();
      }, 60_000);

      async function suspendedRun(orderId: string, amount: string, graphId = 'refunds') {
        const thread = await client.threads.create();
        const first = (await client.runs.wait(thread.thread_id, graphId, {
          input: { messages: [{ role: 'user', content: `refund ${orderId} ${amount}` }] },
        })) as { __interrupt__?: unknown[] };
        expect(first.__interrupt__, logs()).toHaveLength(1);
        const [pending] = await approvals.listPending({ threadId: thread.thread_id });
        expect(pending, logs()).toBeDefined();
        return { threadId: thread.thread_id, pending: pending! };
      }

      async function resumedAt(approvalId: string) {
        const { rows } = await database.db.query<{ resumed_at: Date | null }>(
          'SELECT resumed_at FROM veridex_approvals WHERE id = $1',
          [approvalId],
        );
        return rows[0]?.resumed_at ?? undefined;
      }

      async function types(threadId: string) {
        return (await audit.events(threadId)).map((event) => event.type);
      }

      async function executed(threadId: string) {
        return (await types(threadId)).filter((type) => type === 'tool_executed').length;
      }

      /** The thread once no run is in flight on it (idle, interrupted or errored). */
      async function settled(threadId: string) {
        await until(
          `thread ${threadId} to settle`,
          async () => {
            const runs = await client.runs.list(threadId);
            if (runs.some((run) => run.status === 'pending' || run.status === 'running'))
              return undefined;
            const thread = await client.threads.get(threadId);
            return thread.status === 'busy' ? undefined : thread;
          },
          120_000,
          logs,
        );
        return client.threads.getState(threadId);
      }

      function messagesOf(state: { values: unknown }): Message[] {
        return (state.values as { messages?: Message[] }).messages ?? [];
      }

      function veridexInterrupts(state: Awaited<ReturnType<typeof settled>>) {
        return state.tasks
          .flatMap((task) => task.interrupts ?? [])
          .filter((pending) => (pending.value as { type?: string }).type === 'veridex.approvals');
      }

      /** The thread's last message once it finished with the model's answer. */
      async function finished(threadId: string) {
        return until(
          `thread ${threadId} to finish`,
          async () => {
            const state = await client.threads.getState(threadId);
            const last = messagesOf(state).at(-1);
            return state.next.length === 0 && last?.type === 'ai' ? last : undefined;
          },
          120_000,
          logs,
        );
      }

      it(
        'a client resuming with unsigned, forged, misnamed or another thread’s decisions runs nothing',
        async () => {
          const { threadId, pending } = await suspendedRun('C-1', '400.00');
          const other = await suspendedRun('C-2', '400.00');
          const signed = signAs(pending, 'alice');
          const attempts: unknown[] = [
            { approvalId: pending.id, decision: 'approve', approver: 'alice' },
            { type: 'approve', approvalId: pending.id, approver: 'alice' },
            { ...signed, signature: `${signed.signature.slice(0, -4)}AAAA` },
            signAs(pending, 'bob', 'approve', { approver: 'alice' }),
            // Alice's genuine approval of C-2's request, sent to C-1's thread.
            signAs(other.pending, 'alice'),
          ];
          for (const resume of attempts) {
            await client.runs.wait(threadId, 'refunds', { command: { resume } });
            const state = await settled(threadId);
            expect(veridexInterrupts(state), logs()).toHaveLength(1);
          }
          expect(await executed(threadId)).toBe(0);
          expect((await approvals.require(pending.id)).status).toBe('pending');
          // The decision sent to the wrong thread did not count on its own request either.
          expect((await approvals.require(other.pending.id)).decisions).toEqual([]);
        },
        TEST_MS,
      );

      it(
        'a client rewriting the governed call (Command update + goto, threads.updateState) never runs it with other arguments',
        async () => {
          // Command: rewrite the call's amount in state and jump to the governed node.
          const viaCommand = await suspendedRun('C-3', '500.00');
          const before = messagesOf(await client.threads.getState(viaCommand.threadId));
          const call = before.at(-1)!;
          const rewritten = {
            ...call,
            tool_calls: call.tool_calls!.map((toolCall) => ({
              ...toolCall,
              args: { ...toolCall.args, amount: '99999.00' },
            })),
          };
          await client.runs.wait(viaCommand.threadId, 'refunds', {
            command: { update: { messages: [rewritten] }, goto: 'tools', resume: RECHECK },
          });
          await settled(viaCommand.threadId);
          // threads.updateState: the same rewrite written as the model's step.
          const viaState = await suspendedRun('C-4', '500.00');
          const stateCall = messagesOf(await client.threads.getState(viaState.threadId)).at(-1)!;
          await client.threads.updateState(viaState.threadId, {
            values: {
              messages: [
                {
                  ...stateCall,
                  tool_calls: stateCall.tool_calls!.map((toolCall) => ({
                    ...toolCall,
                    args: { ...toolCall.args, amount: '99999.00' },
                  })),
                },
              ],
            },
            asNode: 'model',
          });
          // Alice approves what she was shown (500.00); the resumer takes it from there.
          for (const run of [viaCommand, viaState]) {
            await approvals.decide(run.pending.id, signAs(run.pending, 'alice'));
          }
          for (const run of [viaCommand, viaState]) {
            await until(
              `the resumer to handle ${run.pending.id}`,
              async () => {
                const { rows } = await database.db.query<{ resumed_at: Date | null }>(
                  'SELECT resumed_at FROM veridex_approvals WHERE id = $1',
                  [run.pending.id],
                );
                return rows[0]?.resumed_at ? true : undefined;
              },
              120_000,
              logs,
            );
            await settled(run.threadId);
            const events = await audit.events(run.threadId);
            const ran = events.filter((event) => event.type === 'tool_executed');
            // Nothing ran with the rewritten amount (at most the approved call, as approved).
            expect(JSON.stringify(ran), logs()).not.toContain('99999');
            expect(ran.length).toBe(0);
            expect(
              events.some(
                (event) =>
                  event.type === 'security_event' &&
                  (event.payload as { kind?: string }).kind === 'proposal_mutation_detected',
              ),
              logs(),
            ).toBe(true);
          }
        },
        TEST_MS,
      );

      it(
        'forking from the approval checkpoint, resuming a copied thread and racing runs never run the refund twice',
        async () => {
          const { threadId, pending } = await suspendedRun('C-5', '600.00');
          const suspendedAt = (await client.threads.getState(threadId)).checkpoint.checkpoint_id!;
          // Copied while it waits: the copy is another thread, so Alice's approval is not its own.
          const copy = await client.threads.copy(threadId);
          const decision = signAs(pending, 'alice');
          await approvals.decide(pending.id, decision);
          // Races with the resumer's run: three client resumes under each multitask strategy.
          await Promise.allSettled(
            (['enqueue', 'interrupt', 'rollback'] as const).map((multitaskStrategy) =>
              client.runs.create(threadId, 'refunds', {
                command: { resume: RECHECK },
                multitaskStrategy,
              }),
            ),
          );
          await finished(threadId);
          await settled(threadId);
          expect(await executed(threadId), logs()).toBe(1);
          // A fork from the checkpoint that waited for Alice, with her very decision again.
          for (const resume of [RECHECK, decision]) {
            await client.runs.wait(threadId, 'refunds', {
              checkpointId: suspendedAt,
              command: { resume },
            });
            await settled(threadId);
          }
          expect(await executed(threadId), logs()).toBe(1);
          // The copy, resumed with a recheck and with Alice's decision: it waits for its own.
          for (const resume of [RECHECK, decision]) {
            await client.runs.wait(copy.thread_id, 'refunds', { command: { resume } });
            const state = await settled(copy.thread_id);
            expect(veridexInterrupts(state), logs()).toHaveLength(1);
          }
          expect(await executed(copy.thread_id)).toBe(0);
        },
        TEST_MS,
      );

      it(
        'an insider flipping a pending request to approved makes the resumer resume into a refusal, not a refund',
        async () => {
          const { threadId, pending } = await suspendedRun('C-6', '700.00');
          await database.db.query(
            `UPDATE veridex_approvals SET status = 'approved', decided_at = now() WHERE id = $1`,
            [pending.id],
          );
          const last = await finished(threadId);
          expect(String(last.content), logs()).toContain('approval_unproven');
          expect(await executed(threadId)).toBe(0);
          expect(await types(threadId)).toContain('security_event');
        },
        TEST_MS,
      );

      it(
        "another governed agent's approved request on the same server is left to it, not run by the refunds resumer",
        async () => {
          const payout = await suspendedRun('P-1', '800.00', 'payouts');
          await approvals.decide(payout.pending.id, signAs(payout.pending, 'alice'));
          // A refund-bot resolution decided after it: once the resumer handled that one, it has
          // been through the payout's too.
          const later = await suspendedRun('C-7', '800.00');
          await approvals.decide(later.pending.id, signAs(later.pending, 'alice', 'reject'));
          await until(
            `the resumer to handle ${later.pending.id}`,
            () => resumedAt(later.pending.id),
            120_000,
            logs,
          );
          await finished(later.threadId);
          expect(await resumedAt(payout.pending.id)).toBeUndefined();
          const [payoutsAssistant] = await client.assistants.search({ graphId: 'payouts' });
          const runs = await client.runs.list(payout.threadId);
          expect(runs.map((run) => run.assistant_id)).toEqual(
            runs.map(() => payoutsAssistant!.assistant_id),
          );
          expect(veridexInterrupts(await settled(payout.threadId))).toHaveLength(1);
          expect(await executed(payout.threadId)).toBe(0);
          // Its own client resumes it: Alice's approval was good, and the payout runs once.
          await client.runs.wait(payout.threadId, 'payouts', { command: { resume: RECHECK } });
          expect(String((await finished(payout.threadId)).content)).toBe(
            'Paid: {"refundId":"rf_P-1"}',
          );
          expect(await executed(payout.threadId)).toBe(1);
        },
        TEST_MS,
      );
    },
  );
}
