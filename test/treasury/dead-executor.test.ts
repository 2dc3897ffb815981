import { type AIMessage, HumanMessage, type ToolMessage } from '@langchain/core/messages';
import {
  type BaseCheckpointSaver,
  END,
  MessagesAnnotation,
  START,
  StateGraph,
} from '@langchain/langgraph';
import { expect, it } from 'vitest';
import { PostgresCheckpointer } from '../../src/checkpointer/index.js';
import type { Database } from '../../src/db/index.js';
import { VeridexError } from '../../src/errors/index.js';
import {
  type ApprovalsInterrupt,
  governedToolNode,
  isThreadFinished,
  resumeThread,
  routeAfterTools,
} from '../../src/nodes/index.js';
import { PolicyEngine } from '../../src/policy/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { idempotencyKeyFor } from '../../src/tools/index.js';
import type { TransferExecutor } from '../../src/treasury/index.js';
import { signAs } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';
import { ACME, kitFixture } from './kit-fixture.js';

// Found by `npm run soak`: a worker was killed while executing an approved transfer (its key
// `executing`, its lease live). Another worker resumed the thread, waited for the key, got
// "already executing elsewhere" as the tool's answer — checkpointed as a failed transfer — and
// the thread completed: the approved payment never ran. A busy key has no answer yet: the step
// must fail and stay resumable until the dead worker's lease runs out and the call is recovered.

/** One worker process: its own kit, tool node, graph and checkpointer over the shared database. */
async function worker(db: Database, executor?: (rail: TransferExecutor) => TransferExecutor) {
  const f = await kitFixture({
    backend: { kind: 'database', db },
    ...(executor ? { executor } : {}),
  });
  const tools = governedToolNode({
    tools: f.kit.tools,
    policy: new PolicyEngine({ rules: f.kit.policyRules, audit: f.audit }),
    approvals: f.approvals,
    audit: f.audit,
    idempotency: { store: f.kit.idempotency, waitMs: 100 },
    agentId: f.kit.agentId,
  });
  const model = scriptedModel([
    { toolCalls: [{ name: 'transfer', args: { to: ACME, amount: '500.00', currency: 'USD' } }] },
    'Paid.',
  ]);
  const checkpointer: BaseCheckpointSaver = PostgresCheckpointer.fromDatabase(db);
  const graph = new StateGraph(MessagesAnnotation)
    .addNode('model', async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode('tools', tools)
    .addEdge(START, 'model')
    .addConditionalEdges('model', (state) =>
      (state.messages.at(-1) as AIMessage).tool_calls?.length ? 'tools' : END,
    )
    .addConditionalEdges('tools', routeAfterTools('model'), ['model', END])
    .compile({ checkpointer });
  return { ...f, graph };
}

describeEachDatabase('a transfer whose worker died mid-execution', ({ db }) => {
  it('fails the step with idempotency_busy while the lease lives, then pays exactly once', async () => {
    let reached: () => void = () => undefined;
    const inExecutor = new Promise<void>((resolve) => {
      reached = resolve;
    });
    // Worker A reaches the payment rail and never comes back (killed there).
    const a = await worker(db(), (rail) => ({
      execute: () => {
        reached();
        return new Promise(() => undefined);
      },
      lookup: (key) => rail.lookup!(key),
    }));
    const threadId = 'payout-dead-executor';
    const config = { configurable: { thread_id: threadId } };
    const first = await a.graph.invoke({ messages: [new HumanMessage('Pay Acme $500')] }, config);
    const [request] = (first as unknown as { __interrupt__: Array<{ value: ApprovalsInterrupt }> })
      .__interrupt__[0]!.value.approvals;
    await a.approvals.decide(request!.approvalId, signAs(request!, 'alice@company.com'));
    void resumeThread(a.graph, threadId);
    await inExecutor;

    // Worker B picks the thread up while A's lease is live: no answer exists yet.
    const b = await worker(db());
    const busy = await resumeThread(b.graph, threadId).catch((error: unknown) => error);
    expect(VeridexError.is(busy, 'idempotency_busy'), String(busy)).toBe(true);
    expect(isThreadFinished(await b.graph.getState(config))).toBe(false);
    expect(await b.executions()).toBe(0);
    expect(await b.eventTypes(threadId)).not.toContain('tool_failed');

    // A's lease runs out (as minutes would pass): the call is recovered from the rail and runs.
    const key = idempotencyKeyFor({ threadId, toolCallId: request!.toolCallId });
    await db().query(
      "UPDATE veridex_idempotency_keys SET lease_expires_at = now() - interval '1 second' WHERE key = $1",
      [key],
    );
    const done = await resumeThread(b.graph, threadId);
    expect(done.messages.at(-1)?.content).toBe('Paid.');
    const answer = done.messages.find((m) => m.getType() === 'tool') as ToolMessage;
    expect(answer.status).toBe('success');
    expect(await b.executions(key)).toBe(1);
    expect(await b.executions()).toBe(1);
  }, 120_000);
});
