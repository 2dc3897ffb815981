import { tool as langchainTool } from '@langchain/core/tools';
import { Command, MemorySaver } from '@langchain/langgraph';
import { createAgent } from 'langchain';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ApprovalManager } from '../../src/approvals/index.js';
import {
  AuditLog,
  Ed25519Signer,
  PostgresAuditStore,
  type TraceEvent,
  verifyEvidence,
} from '../../src/audit/index.js';
import { ContextCompiler } from '../../src/context/index.js';
import {
  type GovernanceMiddlewareOptions,
  governanceMiddleware,
} from '../../src/middleware/index.js';
import { type ScriptedTurn, scriptedModel } from '../../src/testing/index.js';
import { tool } from '../../src/tools/index.js';
import { signAs, TEST_APPROVERS, testApproverInits } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';

// Each run of a governed agent is recorded once, by whichever hook the configuration has: the
// budget step, the model wrapper, or — in the minimal middleware, which wraps no model call —
// the first governed tool calls of the run. These tests pin where the event lands in the chain.

const lookup = tool({
  name: 'lookup',
  description: 'Looks a SKU up.',
  safetyClass: 'read',
  input: z.object({ sku: z.string() }),
  output: z.object({ sku: z.string() }),
  execute: async ({ input }) => input,
});
const refund = tool({
  name: 'refund',
  description: 'Refunds an order.',
  safetyClass: 'financial',
  idempotency: 'required',
  input: z.object({ order: z.string() }),
  output: z.object({ ok: z.boolean() }),
  execute: async () => ({ ok: true }),
});
const call = (name: string, sku: string) => ({
  name,
  args: name === 'refund' ? { order: sku } : { sku },
});

function agentWith(
  turns: ScriptedTurn[],
  options: Partial<GovernanceMiddlewareOptions> = {},
  audit = new AuditLog(),
) {
  const approvals = new ApprovalManager({ audit, approvers: testApproverInits(TEST_APPROVERS) });
  const middleware = governanceMiddleware({
    tools: [lookup, refund],
    audit,
    approvals,
    ...options,
  });
  const agent = createAgent({
    model: scriptedModel(turns),
    tools: [],
    middleware: [middleware] as never,
    checkpointer: new MemorySaver(),
  }) as unknown as { invoke(input: unknown, config: unknown): Promise<Record<string, unknown>> };
  return { agent, audit, middleware };
}

let threads = 0;
const thread = () => ({ configurable: { thread_id: `run-started-${process.pid}-${++threads}` } });
const ask = (content: string) => ({ messages: [{ role: 'user', content }] });
const types = (events: TraceEvent[]) => events.map((event) => event.type);
// The events of one allowed, executed call, in chain order.
const ONE_CALL = ['tool_proposed', 'policy_decision', 'tool_executed'];
const started = (events: TraceEvent[]) => events.filter((event) => event.type === 'run_started');

describe('run_started in the minimal middleware (no model hook)', () => {
  it('adds no beforeModel or afterAgent hook; the model wrapper only learns the tools and the gate decides turns', () => {
    const { middleware } = agentWith([]);
    expect(middleware.beforeModel).toBeUndefined();
    expect(middleware.afterAgent).toBeUndefined();
    expect(middleware.wrapModelCall).toBeTypeOf('function');
    expect(middleware.afterModel).toBeTypeOf('object');
    expect(middleware.wrapToolCall).toBeTypeOf('function');
  });

  it('records each run once, first in its chain, across several tool turns and runs', async () => {
    const { agent, audit } = agentWith([
      { toolCalls: [call('lookup', 'a')] },
      { toolCalls: [call('lookup', 'b')] },
      'done',
      { toolCalls: [call('lookup', 'c')] },
      'done again',
    ]);
    const config = thread();
    await agent.invoke(ask('first'), config);
    await agent.invoke(ask('second'), config);
    const events = await audit.events(config.configurable.thread_id);
    expect(types(events)).toEqual([
      'run_started',
      ...ONE_CALL,
      ...ONE_CALL,
      'run_started',
      ...ONE_CALL,
    ]);
    // How many messages each run started with: the first user message; the six messages of
    // the first run and the second user message.
    expect(started(events).map((event) => event.payload)).toEqual([
      { messages: 1 },
      { messages: 7 },
    ]);
    expect((await audit.verify(config.configurable.thread_id)).valid).toBe(true);
  });

  it('is written by the approval gate when the agent has only its own LangChain tools', async () => {
    const audit = new AuditLog();
    const lookupStock = langchainTool(async ({ sku }) => `in stock: ${sku}`, {
      name: 'lookup_stock',
      description: 'Looks stock up.',
      schema: z.object({ sku: z.string() }),
    });
    const middleware = governanceMiddleware({ audit, safetyClasses: { lookup_stock: 'read' } });
    const agent = createAgent({
      model: scriptedModel([
        { toolCalls: [{ name: 'lookup_stock', args: { sku: 'a' } }] },
        { toolCalls: [{ name: 'lookup_stock', args: { sku: 'b' } }] },
        'done',
      ]),
      tools: [lookupStock],
      middleware: [middleware] as never,
      checkpointer: new MemorySaver(),
    }) as unknown as { invoke(input: unknown, config: unknown): Promise<unknown> };
    const config = thread();
    await agent.invoke(ask('two lookups'), config);
    const events = await audit.events(config.configurable.thread_id);
    expect(types(events)).toEqual(['run_started', ...ONE_CALL, ...ONE_CALL]);
  });

  it('records a run once when its first turn calls tools in parallel', async () => {
    const { agent, audit } = agentWith([
      { toolCalls: [call('lookup', 'a'), call('lookup', 'b'), call('lookup', 'c')] },
      'done',
    ]);
    const config = thread();
    await agent.invoke(ask('three at once'), config);
    const events = await audit.events(config.configurable.thread_id);
    expect(started(events)).toHaveLength(1);
    expect(events[0]?.type).toBe('run_started');
    expect(events.filter((event) => event.type === 'tool_executed')).toHaveLength(3);
  });

  it('records a run once across its approval interrupt and resume', async () => {
    const { agent, audit } = agentWith([{ toolCalls: [call('refund', 'o-1')] }, 'refunded']);
    const config = thread();
    const suspended = await agent.invoke(ask('refund o-1'), config);
    const pending = (suspended.__interrupt__ as Array<{ value: { approvals: unknown[] } }>)[0]!;
    const approval = pending.value.approvals[0] as Parameters<typeof signAs>[0];
    const done = await agent.invoke(new Command({ resume: signAs(approval, 'alice') }), config);
    expect(done.__interrupt__).toBeUndefined();
    const events = await audit.events(config.configurable.thread_id);
    expect(types(events)[0]).toBe('run_started');
    expect(started(events)).toHaveLength(1);
    expect(types(events)).toContain('tool_executed');
  });
});

describe('run_started where the configuration has a model hook', () => {
  it('is written before the first model call by the budget step, also for a run without tools', async () => {
    const { agent, audit } = agentWith(['just text'], {
      budget: { maxTokens: 10_000 },
    });
    const config = thread();
    await agent.invoke(ask('hello'), config);
    expect(types(await audit.events(config.configurable.thread_id))).toEqual(['run_started']);
  });

  it('is written by the model wrapper with a context compiler, once per run', async () => {
    const { agent, audit } = agentWith([{ toolCalls: [call('lookup', 'a')] }, 'done'], {
      context: new ContextCompiler({ model: 'gpt-4o', contextLimit: 128_000 }),
    });
    const config = thread();
    await agent.invoke(ask('hello'), config);
    const events = await audit.events(config.configurable.thread_id);
    expect(types(events)[0]).toBe('run_started');
    expect(started(events)).toHaveLength(1);
  });

  it('is written by the model wrapper when only evidence is configured, so a run without tools is sealed with it', async () => {
    const signer = new Ed25519Signer(new Uint8Array(32).fill(7));
    const { agent, middleware } = agentWith(['just text'], { evidence: { signers: [signer] } });
    const config = thread();
    await agent.invoke(ask('hello'), config);
    const sealed = middleware.evidence(config.configurable.thread_id)!;
    const verification = verifyEvidence(JSON.parse(JSON.stringify(sealed.bundle)), {
      keys: [signer.verifier()],
    });
    expect(verification.valid, verification.reasons.join('; ')).toBe(true);
    expect(verification.body?.events.map((event) => event.type)).toEqual([
      'run_started',
      'run_completed',
    ]);
  });
});

describeEachDatabase('run_started on a database audit log', ({ db }) => {
  // Parallel calls of the run's first turn each carry the event in their own audit write, in
  // concurrent transactions: the store keeps one, and the chain stays valid.
  it('is stored once when the first turn calls tools in parallel', async () => {
    const audit = new AuditLog({ store: new PostgresAuditStore(db()) });
    const turns: ScriptedTurn[] = [
      { toolCalls: ['a', 'b', 'c', 'd'].map((sku) => call('lookup', sku)) },
      'done',
    ];
    const { agent } = agentWith(turns, {}, audit);
    const config = thread();
    await agent.invoke(ask('four at once'), config);
    const events = await audit.events(config.configurable.thread_id);
    expect(events[0]?.type).toBe('run_started');
    expect(started(events)).toHaveLength(1);
    expect(events.filter((event) => event.type === 'tool_executed')).toHaveLength(4);
    expect((await audit.verify(config.configurable.thread_id)).valid).toBe(true);
  });
});
