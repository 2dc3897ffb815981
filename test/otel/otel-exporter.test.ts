import { HumanMessage } from '@langchain/core/messages';
import { SpanStatusCode } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/audit/index.js';
import { resumeThread } from '../../src/nodes/index.js';
import { otelExporter } from '../../src/otel/index.js';
import { PAYOUT_PROMPT, treasuryRun } from '../adapters/fixtures/treasury-run.js';
import { signAs } from '../support/approvers.js';
import { ACME } from '../treasury/kit-fixture.js';

function setup(options: { includeArguments?: boolean; includeApprovers?: boolean } = {}) {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
  const exporter = otelExporter({
    tracer: provider.getTracer('veridex-test'),
    agentName: 'payout-bot',
    ...options,
  });
  return { memory, exporter };
}

const byName = (spans: readonly ReadableSpan[], name: string) =>
  spans.filter((span) => span.name === name);

async function payout(options: Parameters<typeof setup>[0] = {}) {
  const { memory, exporter } = setup(options);
  const run = await treasuryRun(undefined, { audit: (audit) => exporter.attach(audit) });
  const config = { configurable: { thread_id: 'payout' } };
  const first = await run.graph.invoke({ messages: [new HumanMessage(PAYOUT_PROMPT)] }, config);
  const request = (
    first as unknown as {
      __interrupt__: Array<{
        value: { approvals: Array<{ approvalId: string; proposalHash: string }> };
      }>;
    }
  ).__interrupt__[0]!.value.approvals[0]!;
  for (const approver of ['alice@company.com', 'bob@company.com']) {
    await resumeThread(run.graph, 'payout', signAs(request, approver));
  }
  expect(await run.executions()).toBe(1);
  return { spans: memory.getFinishedSpans(), exporter, memory, audit: run.audit };
}

describe('otelExporter', () => {
  it('turns a governed payout into GenAI agent, tool and approval spans', async () => {
    const { spans } = await payout();
    const agents = byName(spans, 'invoke_agent payout-bot');
    // Suspended twice (waiting for alice, then bob), completed once.
    expect(agents.map((span) => span.attributes['veridex.run.outcome'])).toEqual([
      'suspended',
      'suspended',
      'completed',
    ]);
    for (const agent of agents) {
      expect(agent.attributes).toMatchObject({
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'payout-bot',
        'gen_ai.conversation.id': 'payout',
      });
    }
    const [balance] = byName(spans, 'execute_tool get_balance');
    expect(balance!.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'get_balance',
      'gen_ai.tool.call.id': 'call_0_0',
      'gen_ai.tool.type': 'function',
      'veridex.safety_class': 'read',
    });
    expect(balance!.status.code).not.toBe(SpanStatusCode.ERROR);
    expect(balance!.parentSpanContext?.spanId).toBe(agents[0]!.spanContext().spanId);
    const decision = balance!.events.find((event) => event.name === 'veridex.policy_decision');
    expect(decision?.attributes).toMatchObject({
      'veridex.verdict': 'allow',
      'veridex.rule_id': 'default.safety_class',
    });

    // The transfer waits in the first segment, and executes in the last.
    const transfers = byName(spans, 'execute_tool transfer');
    expect(transfers.at(0)!.attributes['veridex.run.outcome']).toBe('suspended');
    expect(transfers.at(-1)!.parentSpanContext?.spanId).toBe(agents.at(-1)!.spanContext().spanId);
    expect(transfers.at(-1)!.events.map((event) => event.name)).toEqual(
      expect.arrayContaining(['veridex.counterparty_screened', 'veridex.transfer_executed']),
    );
    const approvals = byName(spans, 'veridex.approval_wait');
    expect(new Set(approvals.map((span) => span.attributes['gen_ai.tool.name']))).toEqual(
      new Set(['transfer']),
    );
    expect(approvals.at(-1)!.attributes['veridex.approval.status']).toBe('approved');
    expect(approvals.flatMap((span) => span.events.map((event) => event.name))).toEqual(
      expect.arrayContaining([
        'veridex.approval_requested',
        'veridex.approval_decided',
        'veridex.approval_resolved',
      ]),
    );
    // Spans carry the audit events' own times.
    for (const span of spans)
      expect(span.endTime[0] * 1e3 + span.endTime[1] / 1e6).toBeGreaterThanOrEqual(
        span.startTime[0] * 1e3,
      );
  });

  it('carries no arguments, identities or addresses unless asked, and scrubs them when asked', async () => {
    const quiet = JSON.stringify(
      (await payout()).spans.map((span) => [span.attributes, span.events]),
    );
    expect(quiet).not.toContain(ACME);
    expect(quiet).not.toContain('alice@company.com');
    expect(quiet).not.toContain('50000.00');
    expect(quiet).not.toContain('gen_ai.tool.call.arguments');

    const verbose = (await payout({ includeArguments: true, includeApprovers: true })).spans;
    const transfer = byName(verbose, 'execute_tool transfer')[0]!;
    expect(JSON.parse(String(transfer.attributes['gen_ai.tool.call.arguments']))).toMatchObject({
      to: ACME,
      amount: '50000.00',
    });
    expect(JSON.stringify(verbose.map((span) => span.events))).toContain('alice@company.com');

    // A credential an agent put into arguments is redacted even though nobody registered it.
    const { memory, exporter } = setup({ includeArguments: true });
    const audit = new AuditLog();
    exporter.attach(audit);
    await audit.append({
      threadId: 't',
      type: 'tool_proposed',
      payload: {
        toolName: 'http',
        toolCallId: 'c1',
        arguments: { header: 'Bearer sk_live_51HxYzABCDEFGHIJKLMNOPqrstuv' },
      },
    });
    await audit.append({
      threadId: 't',
      type: 'tool_executed',
      payload: { toolName: 'http', toolCallId: 'c1' },
    });
    const [span] = byName(memory.getFinishedSpans(), 'execute_tool http');
    expect(String(span!.attributes['gen_ai.tool.call.arguments'])).toContain('[REDACTED:');
    expect(JSON.stringify(span!.attributes)).not.toContain('sk_live_');
  });

  it('marks denied and failed calls as errors, skips re-appended events and ends open spans on flush', async () => {
    const { memory, exporter } = setup();
    const audit = new AuditLog();
    exporter.attach(audit);
    const proposed = {
      threadId: 't',
      type: 'tool_proposed' as const,
      eventId: 'evt_p',
      payload: { toolName: 'wire', toolCallId: 'c1' },
    };
    await audit.append(proposed);
    await audit.append(proposed);
    await audit.append({
      threadId: 't',
      type: 'policy_decision',
      payload: { toolName: 'wire', toolCallId: 'c1', verdict: 'deny', ruleId: 'sanctions' },
    });
    await audit.append({
      threadId: 't',
      type: 'tool_proposed',
      payload: { toolName: 'fetch', toolCallId: 'c2' },
    });
    await audit.append({
      threadId: 't',
      type: 'tool_failed',
      payload: { toolName: 'fetch', toolCallId: 'c2', code: 'sandbox_violation' },
    });
    await audit.append({
      threadId: 't',
      type: 'tool_proposed',
      payload: { toolName: 'slow', toolCallId: 'c3' },
    });
    const finished = memory.getFinishedSpans();
    expect(byName(finished, 'execute_tool wire')).toHaveLength(1);
    expect(byName(finished, 'execute_tool wire')[0]!.attributes['error.type']).toBe(
      'policy_denied',
    );
    expect(byName(finished, 'execute_tool fetch')[0]!.status.code).toBe(SpanStatusCode.ERROR);
    expect(byName(finished, 'execute_tool slow')).toEqual([]);
    exporter.flush();
    const flushed = memory.getFinishedSpans();
    expect(byName(flushed, 'execute_tool slow')[0]!.attributes['veridex.incomplete']).toBe(true);
    expect(byName(flushed, 'invoke_agent payout-bot')[0]!.attributes['veridex.incomplete']).toBe(
      true,
    );
  });

  it('never breaks the audit log, even when the span backend throws', async () => {
    const audit = new AuditLog();
    const exporter = otelExporter({
      tracer: {
        startSpan: () => {
          throw new Error('collector down');
        },
      } as never,
    });
    exporter.attach(audit);
    await audit.append({ threadId: 't', type: 'run_started', payload: {} });
    expect(await audit.events('t')).toHaveLength(1);
  });
});
