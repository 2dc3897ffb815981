// A governed graph for LangGraph's Agent Server (`langgraph dev`, or a LangSmith deployment):
// the server loads this module, supplies its own checkpointer, and runs the graph for clients
// of its API (`@langchain/langgraph-sdk`). Governance keeps its state in our database —
// DATABASE_URL, else PGlite in ./.veridex/db — which the approvers' inbox (`veridex serve`),
// the CLI and the resumer (./resumer.ts) share. README "Deploying on LangGraph's Agent Server".
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import {
  END,
  type LangGraphRunnableConfig,
  MessagesAnnotation,
  START,
  StateGraph,
} from '@langchain/langgraph';
import { ApprovalManager } from '@veridex/langgraph/approvals';
import { AuditLog, PostgresAuditStore } from '@veridex/langgraph/audit';
import { createDatabase, migrate } from '@veridex/langgraph/db';
import { governedToolNode, routeAfterTools } from '@veridex/langgraph/nodes';
import { PolicyEngine, rules } from '@veridex/langgraph/policy';
import { tool } from '@veridex/langgraph/tools';
import { z } from 'zod';

/** The governance's agent id: the resumer claims only this agent's requests. */
export const AGENT_ID = 'refund-bot';

const db = await createDatabase();
await migrate(db);
const audit = new AuditLog({ store: new PostgresAuditStore(db) });

const refund = tool({
  name: 'refund',
  description: 'Refund a customer order.',
  safetyClass: 'financial',
  idempotency: 'required',
  input: z.object({ orderId: z.string(), amount: z.string() }),
  output: z.object({ refundId: z.string() }),
  // Your payment provider here, passing idempotencyKey along: the call runs at most once.
  async execute({ input }) {
    return { refundId: `rf_${input.orderId}` };
  },
});

/**
 * The governed refund graph for the agent `agentId` (its governance's proposer), reporting the
 * tool's answer after `reply`. Exported so a second agent of the same shape can be served
 * beside it (the tests' payout-bot); one deployment needs only `graph` below.
 */
export function refundGraph(agentId: string, reply = 'Done') {
  const tools = governedToolNode({
    tools: [refund],
    agentId,
    audit,
    // Approvers are registered with `veridex approvers add`; only their signed decisions count.
    approvals: new ApprovalManager({ db, audit }),
    policy: new PolicyEngine({
      audit,
      rules: [
        rules.argumentThreshold({ argument: 'amount', atLeast: '100', route: 'human_required' }),
      ],
    }),
  });

  /**
   * A stand-in for your model (no key needed): asks for the refund a "refund <order> <amount>"
   * message names, and reports the tool's answer. Bind your chat model to `tools.tools` instead.
   */
  function model(state: typeof MessagesAnnotation.State, config: LangGraphRunnableConfig) {
    const last = state.messages.at(-1) as BaseMessage;
    if (last.getType() === 'tool')
      return { messages: [new AIMessage(`${reply}: ${last.content}`)] };
    const [, orderId = 'A-1', amount = '0'] = String(last.content).split(/\s+/);
    const id = `call_${String(config.configurable?.thread_id).slice(0, 40)}_${state.messages.length}`;
    return {
      messages: [
        new AIMessage({
          content: '',
          tool_calls: [{ name: 'refund', args: { orderId, amount }, id }],
        }),
      ],
    };
  }

  // No checkpointer here: the Agent Server supplies its own.
  return new StateGraph(MessagesAnnotation)
    .addNode('model', model)
    .addNode('tools', tools)
    .addEdge(START, 'model')
    .addConditionalEdges('model', (state) =>
      (state.messages.at(-1) as AIMessage).tool_calls?.length ? 'tools' : END,
    )
    .addConditionalEdges('tools', routeAfterTools('model'), ['model', END])
    .compile();
}

export const graph = refundGraph(AGENT_ID);
