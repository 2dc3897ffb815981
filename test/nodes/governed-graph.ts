import type { AIMessage } from '@langchain/core/messages';
import {
  type BaseCheckpointSaver,
  END,
  MemorySaver,
  MessagesAnnotation,
  START,
  StateGraph,
} from '@langchain/langgraph';
import { z } from 'zod';
import { ApprovalManager } from '../../src/approvals/index.js';
import { AuditLog } from '../../src/audit/index.js';
import {
  type GovernedToolNodeOptions,
  governedToolNode,
  routeAfterTools,
} from '../../src/nodes/index.js';
import { PolicyEngine, type PolicyRule, rules } from '../../src/policy/index.js';
import { type ScriptedTurn, scriptedModel } from '../../src/testing/index.js';
import { type AnyGovernedTool, tool } from '../../src/tools/index.js';
import { TEST_APPROVERS, testApproverInits } from '../support/approvers.js';

/** Side effects of the test tools, so tests can count executions. */
export interface Ledger {
  balanceReads: number;
  transfers: Array<{
    to: string;
    amount: string;
    idempotencyKey: string;
    approvedBy: readonly string[];
  }>;
  rotations: number;
}

/** The test tools: a read, a financial transfer (idempotency required), a privileged rotation. */
export function testTools(ledger: Ledger): AnyGovernedTool[] {
  const getBalance = tool({
    name: 'get_balance',
    description: 'Current balance in USD.',
    safetyClass: 'read',
    input: z.object({ currency: z.string() }),
    output: z.object({ amount: z.string(), currency: z.string() }),
    async execute({ input }) {
      ledger.balanceReads += 1;
      return { amount: '1000000.00', currency: input.currency };
    },
  });
  const transfer = tool({
    name: 'transfer',
    description: 'Send money to a counterparty.',
    safetyClass: 'financial',
    idempotency: 'required',
    input: z.object({ to: z.string(), amount: z.string(), currency: z.string() }),
    output: z.object({ txId: z.string() }),
    async execute({ input, idempotencyKey, context }) {
      ledger.transfers.push({
        to: input.to,
        amount: input.amount,
        idempotencyKey,
        approvedBy: context.approvedBy,
      });
      return { txId: `tx_${ledger.transfers.length}` };
    },
  });
  const rotateKey = tool({
    name: 'rotate_key',
    description: 'Rotate the signing key.',
    safetyClass: 'privileged',
    input: z.object({ keyId: z.string() }),
    output: z.object({ rotated: z.boolean() }),
    async execute() {
      ledger.rotations += 1;
      return { rotated: true };
    },
  });
  return [getBalance, transfer, rotateKey];
}

/** A model → governed tools → model loop, as a user would write it with MessagesAnnotation. */
export function buildGovernedGraph(
  turns: ScriptedTurn[],
  options: {
    rules?: PolicyRule[];
    now?: () => Date;
    checkpointer?: BaseCheckpointSaver;
    extraTools?: AnyGovernedTool[];
    node?: Partial<GovernedToolNodeOptions>;
  } = {},
) {
  const ledger: Ledger = { balanceReads: 0, transfers: [], rotations: 0 };
  const audit = new AuditLog();
  const policy = new PolicyEngine({
    audit,
    rules: options.rules ?? [
      rules.argumentThreshold({
        tools: ['transfer'],
        argument: 'amount',
        atLeast: '10000',
        route: 'dual_approval',
      }),
    ],
    ...(options.now ? { now: options.now } : {}),
  });
  // 'payout-bot' (the agent) is registered too: it may hold a key and still never approve itself.
  const approvals = new ApprovalManager({
    audit,
    approvers: testApproverInits([...TEST_APPROVERS, 'payout-bot']),
    ...(options.now ? { now: options.now } : {}),
  });
  const model = scriptedModel(turns);
  const tools = governedToolNode({
    tools: [...testTools(ledger), ...(options.extraTools ?? [])],
    policy,
    approvals,
    audit,
    agentId: 'payout-bot',
    ...options.node,
  });
  const graph = new StateGraph(MessagesAnnotation)
    .addNode('model', async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode('tools', tools)
    .addEdge(START, 'model')
    .addConditionalEdges('model', (state) =>
      (state.messages.at(-1) as AIMessage).tool_calls?.length ? 'tools' : END,
    )
    .addConditionalEdges('tools', routeAfterTools('model'), ['model', END])
    .compile({ checkpointer: options.checkpointer ?? new MemorySaver() });
  return { graph, ledger, audit, approvals, policy, model, tools };
}
