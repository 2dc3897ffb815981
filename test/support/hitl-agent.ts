// A createAgent agent governed by the middleware, as the HITL attack suites drive it: three
// plain LangChain tools given to `createAgent` (refund: financial, send_email: write and
// `rules.requireApproval`, search: read) that count their executions, a scripted model, and
// the pieces a second process shares with the first (checkpointer, audit log, approvals).
import { type BaseMessage, ToolMessage } from '@langchain/core/messages';
import { tool as langchainTool } from '@langchain/core/tools';
import { MemorySaver } from '@langchain/langgraph';
import { createAgent } from 'langchain';
import { z } from 'zod';
import { ApprovalManager } from '../../src/approvals/index.js';
import { AuditLog } from '../../src/audit/index.js';
import type { ApprovalsInterrupt } from '../../src/governance/index.js';
import {
  type GovernanceMiddlewareOptions,
  governanceMiddleware,
} from '../../src/middleware/index.js';
import { PolicyEngine, rules } from '../../src/policy/index.js';
import { type ScriptedTurn, scriptedModel } from '../../src/testing/index.js';
import { TEST_APPROVERS, testApproverInits } from './approvers.js';

/** What the agent's tools did. */
export interface Ran {
  refunds: Array<Record<string, unknown>>;
  emails: Array<Record<string, unknown>>;
  searches: number;
}

export type AgentResult = {
  messages: BaseMessage[];
  __interrupt__?: Array<{ value: unknown; id?: string }>;
};

export interface HitlAgent {
  invoke(input: unknown, config?: unknown): Promise<AgentResult>;
  getState(config: unknown): Promise<{ values: unknown; next: string[] }>;
}

/** What two processes of one deployment share. */
export interface Shared {
  checkpointer: MemorySaver;
  audit: AuditLog;
  approvals: ApprovalManager;
}

export function sharedState(identity?: 'unverified'): Shared {
  const audit = new AuditLog();
  return {
    checkpointer: new MemorySaver(),
    audit,
    approvals: new ApprovalManager({
      audit,
      approvers: testApproverInits([...TEST_APPROVERS]),
      ...(identity ? { identity } : {}),
    }),
  };
}

export function countingTools(ran: Ran) {
  return [
    langchainTool(
      async (args: { order: string; amount: string }) => {
        ran.refunds.push(args);
        return `refunded ${args.order}`;
      },
      {
        name: 'refund',
        description: 'Refunds an order.',
        schema: z.object({ order: z.string(), amount: z.string() }),
      },
    ),
    langchainTool(
      async (args: { to: string; body: string }) => {
        ran.emails.push(args);
        return `sent to ${args.to}`;
      },
      {
        name: 'send_email',
        description: 'Sends an email.',
        schema: z.object({ to: z.string(), body: z.string() }),
      },
    ),
    langchainTool(
      async () => {
        ran.searches += 1;
        return 'found';
      },
      { name: 'search', description: 'Searches.', schema: z.object({ q: z.string() }) },
    ),
  ];
}

/**
 * One process's agent. `middleware` overrides the governance options; `extraMiddleware` is
 * listed before the governance middleware (outermost first).
 */
export function buildHitlAgent(
  turns: ScriptedTurn[],
  middleware: Partial<GovernanceMiddlewareOptions> = {},
  shared: Shared = sharedState(),
  extraMiddleware: unknown[] = [],
) {
  const ran: Ran = { refunds: [], emails: [], searches: 0 };
  const { audit, approvals, checkpointer } = shared;
  const model = scriptedModel(turns, { whenExhausted: 'repeat-last' });
  const governance = governanceMiddleware({
    policy: new PolicyEngine({ audit, rules: [rules.requireApproval({ tools: ['send_email'] })] }),
    approvals,
    audit,
    agentId: 'support-bot',
    safetyClasses: { refund: 'financial', send_email: 'write', search: 'read' },
    ...middleware,
  });
  const agent = createAgent({
    model,
    tools: countingTools(ran),
    middleware: [...extraMiddleware, governance] as never,
    checkpointer,
  }) as unknown as HitlAgent;
  return { agent, ran, model, governance, ...shared };
}

let threads = 0;
export const newThread = () => ({
  configurable: { thread_id: `hitl-attack-${process.pid}-${++threads}` },
});
export const user = (content: string) => ({ messages: [{ role: 'user', content }] });

export function interruptsOf(result: AgentResult): ApprovalsInterrupt[] {
  return (result.__interrupt__ ?? []).map((item) => item.value as ApprovalsInterrupt);
}

export function toolMessages(result: AgentResult): ToolMessage[] {
  return result.messages.filter(
    (message): message is ToolMessage => message instanceof ToolMessage,
  );
}

/** The security events of a thread, as their payloads. */
export async function securityEvents(audit: AuditLog, threadId: string) {
  return (await audit.events(threadId))
    .filter((event) => event.type === 'security_event')
    .map((event) => event.payload as { kind: string; message?: string; approvalId?: string });
}
