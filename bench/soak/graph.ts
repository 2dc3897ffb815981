// The governed graph every soak worker runs, and the stack under it: a treasury agent (scripted
// model) whose transfers go through governedToolNode, policy, signed approvals, the at-most-once
// ledger, ceilings and the DatabasePaymentRail, checkpointed by PostgresCheckpointer — all in
// one PostgreSQL schema shared by every process of the run.
import { type AIMessage, type BaseMessage, HumanMessage } from '@langchain/core/messages';
import {
  END,
  type LangGraphRunnableConfig,
  MessagesAnnotation,
  START,
  StateGraph,
} from '@langchain/langgraph';
import { ApprovalManager } from '../../src/approvals/index.js';
import { AuditLog, Ed25519Signer, PostgresAuditStore } from '../../src/audit/index.js';
import { PostgresCheckpointer } from '../../src/checkpointer/index.js';
import type { Database } from '../../src/db/index.js';
import { governedToolNode, routeAfterTools } from '../../src/nodes/index.js';
import { PolicyEngine } from '../../src/policy/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { PostgresIdempotencyStore } from '../../src/tools/index.js';
import {
  createTreasuryKit,
  DatabasePaymentRail,
  NoopSanctionsScreener,
  PostgresCeilingStore,
  StaticBalanceProvider,
} from '../../src/treasury/index.js';

/** A denylisted counterparty: transfers to it are denied before any approval is requested. */
export const SANCTIONED = '0x8589427373D6D84E98730D7795D8f6f8731FDA16';
export const APP_ID = 'soak-app';
export const AGENT_ID = 'payout-bot';

/** What one node execution cost, reported by {@link timedNode}. */
export interface NodeSample {
  node: string;
  /** `read` (get_balance), `suspend` (transfer interrupted for approval), `execute` (transfer ran or failed), or `other`. */
  kind: string;
  ms: number;
}

/** One thread's task, as the coordinator drew it. */
export interface ThreadSpec {
  id: string;
  amount: string;
  to_address: string;
}

/** The message that starts a thread; the scripted model reads its transfer from it. */
export function startMessage(spec: ThreadSpec): HumanMessage {
  return new HumanMessage({
    id: `start-${spec.id}`,
    content: `Pay ${spec.amount} USD to ${spec.to_address} (invoice ${spec.id}).`,
  });
}

const TRANSFER_TEXT =
  /^Pay (\d{1,9}\.\d{2}) USD to (0x[0-9a-fA-F]{40}) \(invoice ([\w-]{1,80})\)\.$/;

function transferOf(messages: readonly BaseMessage[]) {
  const first = messages.find((message) => message.getType() === 'human');
  const match = TRANSFER_TEXT.exec(String(first?.content ?? ''));
  if (!match) throw new Error('soak: the first message is not a transfer request');
  return { to: match[2]!, amount: match[1]!, currency: 'USD', memo: `invoice ${match[3]}` };
}

/** Options of {@link buildSoakStack}. */
export interface SoakStackOptions {
  db: Database;
  evidenceKey: Uint8Array;
  evidenceDir: string;
  approvalTimeoutMs: number;
  /** Receives every node's own time (workers forward them to the coordinator). */
  onSample?: (sample: NodeSample) => void;
}

/** Wraps a node so its own time is reported, interrupts and errors included. */
function timedNode<State extends { messages: BaseMessage[] }>(
  name: string,
  run: (state: State, config: LangGraphRunnableConfig) => Promise<unknown>,
  onSample: ((sample: NodeSample) => void) | undefined,
) {
  return async (state: State, config: LangGraphRunnableConfig) => {
    const start = performance.now();
    let kind = 'other';
    if (name === 'tools') {
      const calls = (state.messages.at(-1) as AIMessage | undefined)?.tool_calls ?? [];
      kind = calls.some((call) => call.name === 'transfer') ? 'execute' : 'read';
    }
    try {
      return await run(state, config);
    } catch (error) {
      if (kind === 'execute' && (error as { name?: string }).name === 'GraphInterrupt') {
        kind = 'suspend';
      }
      throw error;
    } finally {
      onSample?.({ node: name, kind, ms: performance.now() - start });
    }
  };
}

/** Everything a soak process needs to run, resume or check threads. */
export async function buildSoakStack(options: SoakStackOptions) {
  const { db } = options;
  const audit = new AuditLog({ store: new PostgresAuditStore(db) });
  const approvals = new ApprovalManager({
    db,
    audit,
    defaultTimeoutMs: options.approvalTimeoutMs,
  });
  const rail = new DatabasePaymentRail(db);
  const checkpointer = PostgresCheckpointer.fromDatabase(db);
  const kit = createTreasuryKit({
    appId: APP_ID,
    agentId: AGENT_ID,
    audit,
    approvals,
    balance: { provider: new StaticBalanceProvider({ USD: '1000000000000.00' }) },
    transfer: { executor: rail },
    idempotency: new PostgresIdempotencyStore(db),
    ceilings: new PostgresCeilingStore(db),
    sanctions: new NoopSanctionsScreener(),
    evidenceSigner: new Ed25519Signer(options.evidenceKey),
    evidenceOutDir: options.evidenceDir,
    policy: {
      dualApprovalThreshold: { USD: '10000.00' },
      dailyLimit: { USD: '1000000000000.00' },
      counterpartyDenylist: [SANCTIONED],
    },
  });
  const tools = governedToolNode({
    tools: kit.tools,
    policy: new PolicyEngine({ audit, rules: kit.policyRules }),
    approvals,
    audit,
    idempotency: kit.idempotency,
    agentId: kit.agentId,
  });
  const model = scriptedModel([
    { toolCalls: [{ name: 'get_balance', args: { currency: 'USD' } }] },
    (messages) => ({ toolCalls: [{ name: 'transfer', args: transferOf(messages) }] }),
    'Done.',
  ]);
  type State = typeof MessagesAnnotation.State;
  const graph = new StateGraph(MessagesAnnotation)
    .addNode(
      'model',
      timedNode<State>(
        'model',
        async (state) => ({ messages: [await model.invoke(state.messages)] }),
        options.onSample,
      ),
    )
    .addNode(
      'tools',
      timedNode<State>(
        'tools',
        (state, config) => tools.invoke(state as never, config),
        options.onSample,
      ),
    )
    .addNode('evidence', timedNode<State>('evidence', kit.nodes.evidence, options.onSample))
    .addEdge(START, 'model')
    .addConditionalEdges(
      'model',
      (state) => ((state.messages.at(-1) as AIMessage).tool_calls?.length ? 'tools' : 'evidence'),
      ['tools', 'evidence'],
    )
    .addConditionalEdges('tools', routeAfterTools('model'), ['model', END])
    .addEdge('evidence', END)
    .compile({ checkpointer });
  return { db, audit, approvals, rail, checkpointer, kit, graph };
}

export type SoakStack = Awaited<ReturnType<typeof buildSoakStack>>;
