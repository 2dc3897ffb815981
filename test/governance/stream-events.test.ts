// Governance events on LangGraph's `custom` stream (README "Governance events on the custom
// stream"): what a client streaming a governed run learns about each call — and what it never
// learns (arguments, results).
import { AIMessage, type ToolCall } from '@langchain/core/messages';
import { tool as langchainTool } from '@langchain/core/tools';
import {
  Command,
  END,
  MemorySaver,
  MessagesAnnotation,
  START,
  StateGraph,
} from '@langchain/langgraph';
import { createAgent } from 'langchain';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApprovalManager } from '../../src/approvals/index.js';
import { AuditLog } from '../../src/audit/index.js';
import { GOVERNANCE_EVENT, type GovernanceStreamEvent } from '../../src/governance/index.js';
import { governanceMiddleware } from '../../src/middleware/index.js';
import { governedToolNode } from '../../src/nodes/index.js';
import { PolicyEngine, rules } from '../../src/policy/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { tool } from '../../src/tools/index.js';
import { signAs, TEST_APPROVERS, testApproverInits } from '../support/approvers.js';

const SECRET_ARGUMENT = 'order-7f3a-SECRET';

async function customEvents(stream: AsyncIterable<unknown>): Promise<GovernanceStreamEvent[]> {
  const events: GovernanceStreamEvent[] = [];
  for await (const chunk of stream) {
    if ((chunk as { type?: unknown }).type === GOVERNANCE_EVENT) {
      events.push(chunk as GovernanceStreamEvent);
    }
  }
  return events;
}

const facts = (events: GovernanceStreamEvent[]) =>
  events.map((event) => [event.event, event.tool, event.toolCallId]);

describe('governance events on the custom stream', () => {
  it('createAgent middleware: the waiting call, then how each call ended; never arguments or results', async () => {
    const ran: string[] = [];
    const refund = langchainTool(
      async ({ order }: { order: string }) => {
        ran.push(order);
        return `refunded ${order}`;
      },
      { name: 'refund', description: 'Refunds.', schema: z.object({ order: z.string() }) },
    );
    const lookup = langchainTool(async () => 'found', {
      name: 'lookup',
      description: 'Looks up.',
      schema: z.object({ order: z.string() }),
    });
    const audit = new AuditLog();
    const agent = createAgent({
      model: scriptedModel([
        {
          toolCalls: [
            { id: 'c1', name: 'lookup', args: { order: SECRET_ARGUMENT } },
            { id: 'c2', name: 'refund', args: { order: SECRET_ARGUMENT } },
            { id: 'c3', name: 'delete_everything', args: {} },
          ],
        },
        'done',
      ]),
      tools: [lookup, refund],
      middleware: [
        governanceMiddleware({
          audit,
          approvals: new ApprovalManager({
            audit,
            approvers: testApproverInits([...TEST_APPROVERS]),
          }),
          safetyClasses: { lookup: 'read', refund: 'financial' },
        }),
      ] as never,
      checkpointer: new MemorySaver(),
    }) as unknown as {
      stream(input: unknown, config: unknown): Promise<AsyncIterable<unknown>>;
      getState(config: unknown): Promise<{
        tasks: Array<{ interrupts: Array<{ value: unknown }> }>;
      }>;
    };
    const config = {
      configurable: { thread_id: `stream-${process.pid}` },
      streamMode: 'custom' as const,
    };
    const first = await customEvents(
      await agent.stream({ messages: [{ role: 'user', content: 'refund' }] }, config),
    );
    expect(facts(first)).toEqual([['approval_requested', 'refund', 'c2']]);
    const requested = first[0] as Extract<GovernanceStreamEvent, { event: 'approval_requested' }>;
    expect(requested).toMatchObject({
      route: 'human_required',
      quorum: { required: 1, approved: 0 },
    });
    const state = await agent.getState(config);
    const value = (
      state.tasks.flatMap((task) => task.interrupts)[0]!.value as {
        approvals: Array<{ approvalId: string; proposalHash: string }>;
      }
    ).approvals[0]!;
    const second = await customEvents(
      await agent.stream(new Command({ resume: [signAs(value, 'alice')] }), config),
    );
    expect(ran).toEqual([SECRET_ARGUMENT]);
    expect(facts(second)).toEqual(
      expect.arrayContaining([
        ['call_allowed', 'lookup', 'c1'],
        ['call_executed', 'lookup', 'c1'],
        ['call_allowed', 'refund', 'c2'],
        ['call_executed', 'refund', 'c2'],
      ]),
    );
    const allowedRefund = second.find(
      (event) => event.event === 'call_allowed' && event.tool === 'refund',
    ) as Extract<GovernanceStreamEvent, { event: 'call_allowed' }>;
    expect(allowedRefund.approvedBy).toEqual(['alice']);
    expect(JSON.stringify([...first, ...second])).not.toContain(SECRET_ARGUMENT);
    expect(JSON.stringify([...first, ...second])).not.toContain('refunded');
  });

  it('governedToolNode: a denied call is streamed as refused with its code, an allowed one as executed', async () => {
    const calls: ToolCall[] = [
      { id: 'n1', name: 'get_balance', args: { currency: 'EUR' }, type: 'tool_call' },
      { id: 'n2', name: 'wipe', args: {}, type: 'tool_call' },
    ];
    const audit = new AuditLog();
    const tools = [
      tool({
        name: 'get_balance',
        description: 'Balance.',
        safetyClass: 'read',
        input: z.object({ currency: z.string() }),
        output: z.object({ amount: z.string() }),
        execute: async () => ({ amount: '1.00' }),
      }),
      tool({
        name: 'wipe',
        description: 'Wipes.',
        safetyClass: 'write',
        input: z.object({}),
        output: z.object({ ok: z.boolean() }),
        execute: async () => ({ ok: true }),
      }),
    ];
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('model', () => ({ messages: [new AIMessage({ content: '', tool_calls: calls })] }))
      .addNode(
        'tools',
        governedToolNode(tools, {
          audit,
          policy: new PolicyEngine({ audit, rules: [rules.denyTools(['wipe'])] }),
        }),
      )
      .addEdge(START, 'model')
      .addEdge('model', 'tools')
      .addEdge('tools', END)
      .compile({ checkpointer: new MemorySaver() });
    const events = await customEvents(
      await graph.stream(
        { messages: [] },
        { configurable: { thread_id: `node-stream-${process.pid}` }, streamMode: 'custom' },
      ),
    );
    expect(events).toEqual([
      expect.objectContaining({ event: 'call_allowed', tool: 'get_balance', toolCallId: 'n1' }),
      expect.objectContaining({ event: 'call_refused', tool: 'wipe', code: 'policy_denied' }),
      expect.objectContaining({ event: 'call_executed', tool: 'get_balance', replayed: false }),
    ]);
  });

  it("governedToolNode: a governed call shows up in LangGraph's tools stream mode and in streamEvents, like ToolNode's", async () => {
    const graph = balanceGraph();
    const tools: unknown[] = [];
    for await (const chunk of await graph.stream(
      { messages: [] },
      { configurable: { thread_id: `tools-mode-${process.pid}` }, streamMode: 'tools' },
    )) {
      tools.push(chunk);
    }
    expect(tools).toEqual([
      expect.objectContaining({ event: 'on_tool_start', toolCallId: 'b1', name: 'get_balance' }),
      expect.objectContaining({
        event: 'on_tool_end',
        toolCallId: 'b1',
        name: 'get_balance',
        output: expect.stringContaining('1.00'),
      }),
    ]);
    const events: string[] = [];
    for await (const event of balanceGraph().streamEvents(
      { messages: [] },
      { configurable: { thread_id: `events-mode-${process.pid}` }, version: 'v2' },
    )) {
      if (event.event.startsWith('on_tool_')) events.push(`${event.event}:${event.name}`);
    }
    expect(events).toEqual(['on_tool_start:get_balance', 'on_tool_end:get_balance']);
  });
});

describe("createAgent middleware in LangGraph's tools stream mode", () => {
  it("shows the middleware's own sandboxed tool and the agent's tool alike", async () => {
    const lookup = langchainTool(async () => 'found', {
      name: 'lookup',
      description: 'Looks up.',
      schema: z.object({ q: z.string() }),
    });
    const balance = tool({
      name: 'get_balance',
      description: 'Balance.',
      safetyClass: 'read',
      input: z.object({ currency: z.string() }),
      output: z.object({ amount: z.string() }),
      execute: async () => ({ amount: '1.00' }),
    });
    const agent = createAgent({
      model: scriptedModel([
        {
          toolCalls: [
            { id: 'x1', name: 'lookup', args: { q: 'a' } },
            { id: 'x2', name: 'get_balance', args: { currency: 'EUR' } },
          ],
        },
        'ok',
      ]),
      tools: [lookup],
      middleware: [
        governanceMiddleware({
          audit: new AuditLog(),
          tools: [balance],
          safetyClasses: { lookup: 'read' },
        }),
      ] as never,
      checkpointer: new MemorySaver(),
    }) as unknown as { stream(input: unknown, config: unknown): Promise<AsyncIterable<unknown>> };
    const seen: string[] = [];
    for await (const chunk of await agent.stream(
      { messages: [{ role: 'user', content: 'x' }] },
      { configurable: { thread_id: `mw-tools-${process.pid}` }, streamMode: 'tools' },
    )) {
      const { event, name, toolCallId } = chunk as Record<string, string>;
      seen.push(`${event}:${name}:${toolCallId}`);
    }
    expect(seen.sort()).toEqual([
      'on_tool_end:get_balance:x2',
      'on_tool_end:lookup:x1',
      'on_tool_start:get_balance:x2',
      'on_tool_start:lookup:x1',
    ]);
  });
});

function balanceGraph() {
  const audit = new AuditLog();
  return new StateGraph(MessagesAnnotation)
    .addNode('model', () => ({
      messages: [
        new AIMessage({
          content: '',
          tool_calls: [
            { id: 'b1', name: 'get_balance', args: { currency: 'EUR' }, type: 'tool_call' },
          ],
        }),
      ],
    }))
    .addNode(
      'tools',
      governedToolNode(
        [
          tool({
            name: 'get_balance',
            description: 'Balance.',
            safetyClass: 'read',
            input: z.object({ currency: z.string() }),
            output: z.object({ amount: z.string() }),
            execute: async () => ({ amount: '1.00' }),
          }),
        ],
        { audit },
      ),
    )
    .addEdge(START, 'model')
    .addEdge('model', 'tools')
    .addEdge('tools', END)
    .compile({ checkpointer: new MemorySaver() });
}
