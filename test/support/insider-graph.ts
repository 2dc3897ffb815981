import { type AIMessage, HumanMessage } from '@langchain/core/messages';
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ApprovalManager, type ApprovalPack } from '../../src/approvals/index.js';
import { AuditLog, PostgresAuditStore } from '../../src/audit/index.js';
import type { Database } from '../../src/db/index.js';
import {
  type ApprovalsInterrupt,
  governedToolNode,
  type PendingApproval,
  routeAfterTools,
} from '../../src/nodes/index.js';
import { PolicyEngine, rules } from '../../src/policy/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { type Ledger, testTools } from '../nodes/governed-graph.js';
import { testApproverInits } from './approvers.js';

/** Options of {@link insiderGraph}. */
export interface InsiderGraphOptions {
  /** The route a $50,000 transfer escalates to (`policy_pack` uses the pack named `escalation`). */
  route?: 'dual_approval' | 'human_required' | 'policy_pack';
  packs?: Record<string, ApprovalPack>;
  /** Directory roles by approver name. */
  roles?: Record<string, string[]>;
  identity?: 'signed' | 'unverified';
  /** The manager's `maxClockSkewMs` (default its own, 5 minutes). */
  maxClockSkewMs?: number;
}

const pay = {
  name: 'transfer',
  args: { to: 'acme', amount: '50000.00', currency: 'USD' },
  id: 'call_pay',
};

/**
 * A governed graph over `db` as the insider tests attack it: approvals, their audit log and the
 * approver directory (alice, bob, carol) all in the database the insider writes with psql.
 */
export async function insiderGraph(db: Database, options: InsiderGraphOptions = {}) {
  const route = options.route ?? 'dual_approval';
  const ledger: Ledger = { balanceReads: 0, transfers: [], rotations: 0 };
  const audit = new AuditLog({ store: new PostgresAuditStore(db) });
  const policy = new PolicyEngine({
    audit,
    rules: [
      rules.argumentThreshold({
        tools: ['transfer'],
        argument: 'amount',
        atLeast: '10000',
        route,
        ...(route === 'policy_pack' ? { pack: 'escalation' } : {}),
      }),
    ],
  });
  const approvals = new ApprovalManager({
    db,
    audit,
    ...(options.packs ? { packs: options.packs } : {}),
    ...(options.identity ? { identity: options.identity } : {}),
    ...(options.maxClockSkewMs !== undefined ? { maxClockSkewMs: options.maxClockSkewMs } : {}),
  });
  for (const init of testApproverInits(['alice', 'bob', 'carol'], options.roles ?? {})) {
    await approvals.directory.add(init);
  }
  const model = scriptedModel([{ toolCalls: [pay] }, 'done']);
  const tools = governedToolNode({
    tools: testTools(ledger),
    policy,
    approvals,
    audit,
    agentId: 'payout-bot',
  });
  const graph = new StateGraph(MessagesAnnotation)
    .addNode('model', async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode('tools', tools)
    .addEdge(START, 'model')
    .addConditionalEdges('model', (state) =>
      (state.messages.at(-1) as AIMessage).tool_calls?.length ? 'tools' : END,
    )
    .addConditionalEdges('tools', routeAfterTools('model'), ['model', END])
    .compile({ checkpointer: new MemorySaver() });
  return { graph, ledger, audit, approvals };
}

/** Starts the run in `threadId` and returns the approval it waits for. */
export async function suspendedOn(
  graph: Awaited<ReturnType<typeof insiderGraph>>['graph'],
  threadId: string,
): Promise<PendingApproval> {
  const result = await graph.invoke(
    { messages: [new HumanMessage('pay acme')] },
    { configurable: { thread_id: threadId } },
  );
  const value = (result as { __interrupt__?: Array<{ value: ApprovalsInterrupt }> })
    .__interrupt__?.[0]?.value;
  if (!value) throw new Error('expected the run to wait for approval');
  return value.approvals[0]!;
}
