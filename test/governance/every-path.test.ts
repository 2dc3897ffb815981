import { AIMessage, type BaseMessage, type ToolMessage } from '@langchain/core/messages';
import { Command, MemorySaver, MessagesAnnotation, StateGraph } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { serveMcp, toLangChainTool } from '../../src/adapters/index.js';
import { ApprovalManager } from '../../src/approvals/index.js';
import { AuditLog } from '../../src/audit/index.js';
import { type ApprovalsInterrupt, runTool } from '../../src/governance/index.js';
import { PolicyEngine, rules } from '../../src/policy/index.js';
import { tool } from '../../src/tools/index.js';
import { signAs, testApproverInits } from '../support/approvers.js';

/** Side effects, counted: a governed path must never add one without a decision. */
function sideEffects() {
  const ledger = { rotations: 0, payments: 0 };
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
  const pay = tool({
    name: 'pay',
    description: 'Pay an invoice.',
    safetyClass: 'financial',
    idempotency: 'required',
    input: z.object({ invoice: z.string(), amount: z.string() }),
    output: z.object({ paid: z.boolean() }),
    async execute() {
      ledger.payments += 1;
      return { paid: true };
    },
  });
  return { ledger, rotateKey, pay };
}

function governance() {
  const audit = new AuditLog();
  const approvals = new ApprovalManager({ audit, approvers: testApproverInits(['alice', 'bob']) });
  return { audit, approvals };
}

const call = (name: string, args: Record<string, unknown>, id = 'call_1') =>
  new AIMessage({ content: '', tool_calls: [{ id, name, args, type: 'tool_call' }] });

function interruptOf(result: object): ApprovalsInterrupt {
  const value = (result as { __interrupt__?: Array<{ value: unknown }> }).__interrupt__?.[0]?.value;
  if (!value) throw new Error('expected the graph to be suspended on approvals');
  return value as ApprovalsInterrupt;
}

describe('every path to a tool is governed', () => {
  it('runTool alone refuses privileged and financial calls until they are approved', async () => {
    const { ledger, rotateKey, pay } = sideEffects();
    const { audit, approvals } = governance();
    const rotated = await runTool(rotateKey, { keyId: 'k1' }, { audit, approvals, threadId: 't' });
    expect(rotated).toMatchObject({ status: 'error', code: 'approval_required' });
    // Not named and not idempotent: the retry must name the call the refusal gave back.
    const again = await runTool(rotateKey, { keyId: 'k1' }, { audit, approvals, threadId: 't' });
    expect(again.toolCallId).not.toBe(rotated.toolCallId);
    expect(rotated.status === 'error' && rotated.details.toolCallId).toBe(rotated.toolCallId);
    const args = { invoice: 'INV-1', amount: '50000.00' };
    // pay declares idempotency: 'required', so the same arguments are the same call.
    const first = await runTool(pay, args, { audit, approvals, threadId: 't' });
    expect(first).toMatchObject({ status: 'error', code: 'approval_required' });
    expect(ledger).toEqual({ rotations: 0, payments: 0 });
    // Decided elsewhere (the CLI, the inbox): the same call now runs, once.
    const approvalId = String(first.status === 'error' ? first.details.approvalId : '');
    const request = await approvals.require(approvalId);
    expect(request.route).toBe('human_required');
    await approvals.decide(approvalId, signAs(request, 'alice'));
    expect(await runTool(pay, args, { audit, approvals, threadId: 't' })).toMatchObject({
      status: 'success',
    });
    expect(await runTool(pay, args, { audit, approvals, threadId: 't' })).toMatchObject({
      status: 'success',
      replayed: true,
    });
    expect(ledger.payments).toBe(1);
  });

  it('runTool alone applies a deny rule, and the policy decision is audited', async () => {
    const { ledger, pay } = sideEffects();
    const { audit, approvals } = governance();
    const policy = new PolicyEngine({ audit, rules: [rules.denyTools(['pay'])] });
    const result = await runTool(
      pay,
      { invoice: 'x', amount: '1.00' },
      { audit, approvals, policy },
    );
    expect(result).toMatchObject({ status: 'error', code: 'policy_denied' });
    expect(ledger.payments).toBe(0);
    expect((await audit.events('default')).map((e) => e.type)).toEqual([
      'tool_proposed',
      'policy_decision',
    ]);
  });

  it('runTool inside a graph with a checkpointer suspends, and runs once after a signed approval', async () => {
    const { ledger, pay } = sideEffects();
    const { audit, approvals } = governance();
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('pay', async (_state, config) => {
        const result = await runTool(
          pay,
          { invoice: 'INV-2', amount: '900.00' },
          {
            audit,
            approvals,
            threadId: String(config.configurable?.thread_id),
            toolCallId: 'pay-1',
          },
        );
        return { messages: [new AIMessage(result.status)] };
      })
      .addEdge('__start__', 'pay')
      .compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: 'in-graph' } };
    const suspended = await graph.invoke({ messages: [] }, config);
    const [pending] = interruptOf(suspended).approvals;
    expect(pending).toMatchObject({ tool: 'pay', route: 'human_required' });
    expect(ledger.payments).toBe(0);
    const done = await graph.invoke(new Command({ resume: signAs(pending!, 'bob') }), config);
    expect((done.messages as BaseMessage[]).at(-1)?.content).toBe('success');
    expect(ledger.payments).toBe(1);
  });

  it('toLangChainTool in a plain ToolNode suspends where the graph can, and refuses where it cannot', async () => {
    const { ledger, rotateKey } = sideEffects();
    const { audit, approvals } = governance();
    const converted = toLangChainTool(rotateKey, { audit, approvals });
    // A graph with a checkpointer: suspended on a dual approval, then run once.
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('tools', new ToolNode([converted]))
      .addEdge('__start__', 'tools')
      .compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: 'plain-toolnode' } };
    const suspended = await graph.invoke(
      { messages: [call('rotate_key', { keyId: 'k1' })] },
      config,
    );
    const [pending] = interruptOf(suspended).approvals;
    expect(pending).toMatchObject({ route: 'dual_approval', requiredApprovals: 2 });
    await graph.invoke(new Command({ resume: signAs(pending!, 'alice') }), config);
    expect(ledger.rotations).toBe(0);
    const done = await graph.invoke(new Command({ resume: signAs(pending!, 'bob') }), config);
    expect((done.messages.at(-1) as ToolMessage).status).toBe('success');
    expect(ledger.rotations).toBe(1);

    // The same tool without a checkpointer (no way to wait): refused, never run.
    const stateless = new StateGraph(MessagesAnnotation)
      .addNode('tools', new ToolNode([converted]))
      .addEdge('__start__', 'tools')
      .compile();
    const refused = await stateless.invoke({
      messages: [call('rotate_key', { keyId: 'k2' }, 'c2')],
    });
    const message = refused.messages.at(-1) as ToolMessage;
    expect(message.status).toBe('error');
    expect(message.content).toMatch(/approval_required|needs dual approval/);
    expect(ledger.rotations).toBe(1);
  });

  it('serveMcp refuses calls that need approval to any MCP client, and runs them once approved', async () => {
    const { ledger, pay } = sideEffects();
    const { audit, approvals } = governance();
    const server = await serveMcp([pay], { audit, approvals, threadIdFor: () => 'mcp-thread' });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'attacker', version: '1.0.0' });
    await client.connect(clientSide);
    const request = {
      name: 'pay',
      arguments: { invoice: 'INV-9', amount: '10.00' },
      _meta: { 'veridex/toolCallId': 'mcp-pay-1' },
    };
    const first = await client.callTool(request);
    expect(first.isError).toBe(true);
    expect(JSON.stringify(first.content)).toMatch(/approval apr_\w+/);
    expect(ledger.payments).toBe(0);
    const [pending] = await approvals.listPending({ threadId: 'mcp-thread' });
    await approvals.decide(pending!.id, signAs(pending!, 'alice'));
    expect((await client.callTool(request)).isError).toBeFalsy();
    expect((await client.callTool(request)).isError).toBeFalsy();
    expect(ledger.payments).toBe(1);
    await client.close();
  });
});
