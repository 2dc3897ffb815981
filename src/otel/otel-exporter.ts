import {
  type Attributes,
  context,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type { AuditLog, TraceEvent } from '../audit/index.js';
import { safeAttributes, scrubbedValue } from './event-attributes.js';

/** Options for {@link otelExporter}. */
export interface OtelExporterOptions {
  /** Where spans go (`trace.getTracer('my-app')`, or a provider's tracer). */
  tracer: Tracer;
  /** `gen_ai.agent.name` of the agent spans (default `veridex`). */
  agentName?: string;
  /**
   * Opt-in: a tool call's arguments as `gen_ai.tool.call.arguments` (from the audit payload,
   * already scrubbed of registered secrets; credential-shaped strings redacted again; capped).
   */
  includeArguments?: boolean;
  /** Opt-in: approver identities on approval events (`veridex.approver`). */
  includeApprovers?: boolean;
  /** How many event ids are remembered to skip re-appended events (default 10 000). */
  dedupeWindow?: number;
}

/** Turns audit events into OpenTelemetry spans; see {@link otelExporter}. */
export interface OtelExporter {
  /** Exports events (in chain order). Safe to call with events seen before. */
  handle(events: readonly TraceEvent[]): void;
  /** Exports every event `audit` appends from now on; returns the function that stops it. */
  attach(audit: AuditLog): () => void;
  /** Ends every span still open (at shutdown), marked `veridex.incomplete`. */
  flush(): void;
}

interface ThreadSpans {
  agent?: Span;
  tools: Map<string, Span>;
  approvals: Map<string, Span>;
}

const NAME = 'veridex';

/**
 * An audit-log listener that writes OpenTelemetry spans following the GenAI semantic
 * conventions: one `invoke_agent {name}` span per run segment (until it completes, fails or
 * suspends for approval), an `execute_tool {tool}` child per tool call (`gen_ai.tool.name`,
 * `gen_ai.tool.call.id`, `gen_ai.tool.type`), the policy decision as a span event on it, a
 * `veridex.approval_wait` child span for the approval wait, and every other audit event as a
 * span event. Spans carry the audit events' own timestamps, so they line up with the record.
 *
 * Nothing sensitive by default: attributes are decisions and outcomes only — no arguments,
 * results, approver identities or free text; `includeArguments` / `includeApprovers` opt in.
 * A run that suspends ends its spans; the resumed run (maybe in another process) starts new
 * ones in the same conversation (`gen_ai.conversation.id` = thread id).
 *
 * @example
 * const exporter = otelExporter({ tracer: trace.getTracer('payments-agent') });
 * exporter.attach(audit);
 */
export function otelExporter(options: OtelExporterOptions): OtelExporter {
  const { tracer } = options;
  const agentName = options.agentName ?? NAME;
  const threads = new Map<string, ThreadSpans>();
  const seen = new Set<string>();
  // Tool names by call id (and approval id), for spans a resumed run opens from events that do
  // not name the tool.
  const toolNames = new Map<string, string>();
  const window = options.dedupeWindow ?? 10_000;

  const stateOf = (threadId: string): ThreadSpans => {
    let state = threads.get(threadId);
    if (!state) {
      state = { tools: new Map(), approvals: new Map() };
      threads.set(threadId, state);
    }
    return state;
  };
  const child = (parent: Span | undefined, name: string, time: Date, attributes: Attributes) =>
    tracer.startSpan(
      name,
      { kind: SpanKind.INTERNAL, startTime: time, attributes },
      parent ? trace.setSpan(context.active(), parent) : context.active(),
    );
  const agentOf = (state: ThreadSpans, event: TraceEvent, time: Date): Span => {
    state.agent ??= child(undefined, `invoke_agent ${agentName}`, time, {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': agentName,
      'gen_ai.conversation.id': event.threadId,
      'veridex.run.id': event.runId,
    });
    return state.agent;
  };
  const toolOf = (state: ThreadSpans, event: TraceEvent, time: Date): Span | undefined => {
    const callId = event.payload.toolCallId;
    if (typeof callId !== 'string' || callId === '') return undefined;
    if (typeof event.payload.toolName === 'string') {
      toolNames.set(callId, event.payload.toolName);
      if (toolNames.size > window) toolNames.delete(toolNames.keys().next().value as string);
    }
    let span = state.tools.get(callId);
    if (!span) {
      const toolName = toolNames.get(callId) ?? 'unknown';
      span = child(agentOf(state, event, time), `execute_tool ${toolName}`, time, {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': toolName,
        'gen_ai.tool.call.id': callId,
        'gen_ai.tool.type': 'function',
      });
      state.tools.set(callId, span);
    }
    return span;
  };
  const endAll = (state: ThreadSpans, time: Date, attributes: Attributes) => {
    for (const span of [...state.approvals.values(), ...state.tools.values()]) {
      span.setAttributes(attributes);
      span.end(time);
    }
    state.approvals.clear();
    state.tools.clear();
  };

  const handleOne = (event: TraceEvent): void => {
    const state = stateOf(event.threadId);
    const time = new Date(event.timestamp);
    const agent = agentOf(state, event, time);
    const payload = event.payload;
    const callId = typeof payload.toolCallId === 'string' ? payload.toolCallId : undefined;
    const approvalId = typeof payload.approvalId === 'string' ? payload.approvalId : undefined;
    switch (event.type) {
      case 'tool_proposed': {
        const span = toolOf(state, event, time);
        span?.setAttributes({ 'veridex.safety_class': String(payload.safetyClass ?? '') });
        if (options.includeArguments && payload.arguments !== undefined) {
          span?.setAttribute('gen_ai.tool.call.arguments', scrubbedValue(payload.arguments));
        }
        return;
      }
      case 'policy_decision': {
        const span = toolOf(state, event, time) ?? agent;
        span.addEvent('veridex.policy_decision', safeAttributes(event), time);
        if (payload.verdict === 'deny' && callId) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: 'denied by policy' });
          span.setAttribute('error.type', String(payload.code ?? 'policy_denied'));
          span.end(time);
          state.tools.delete(callId);
        }
        return;
      }
      case 'approval_requested':
      case 'approval_decided':
      case 'approval_resolved': {
        if (!approvalId) break;
        if (typeof payload.toolName === 'string') toolNames.set(approvalId, payload.toolName);
        let span = state.approvals.get(approvalId);
        if (!span) {
          const toolName = String(
            payload.toolName ?? (callId ? toolNames.get(callId) : toolNames.get(approvalId)) ?? '',
          );
          span = child(toolOf(state, event, time) ?? agent, 'veridex.approval_wait', time, {
            'veridex.approval.id': approvalId,
            ...(toolName ? { 'gen_ai.tool.name': toolName } : {}),
          });
          state.approvals.set(approvalId, span);
        }
        const attributes = safeAttributes(event);
        if (options.includeApprovers && payload.approver !== undefined) {
          attributes['veridex.approver'] = scrubbedValue(payload.approver);
        }
        span.addEvent(`veridex.${event.type}`, attributes, time);
        if (event.type === 'approval_resolved') {
          span.setAttribute('veridex.approval.status', String(payload.status ?? ''));
          span.end(time);
          state.approvals.delete(approvalId);
        }
        return;
      }
      case 'tool_executed':
      case 'tool_failed': {
        const span = toolOf(state, event, time);
        if (!span || !callId) break;
        span.setAttributes(safeAttributes(event));
        if (event.type === 'tool_failed') {
          span.setStatus({
            code: SpanStatusCode.ERROR,
            message: String(payload.code ?? 'tool_failed'),
          });
          span.setAttribute('error.type', String(payload.code ?? 'tool_failed'));
        }
        span.end(time);
        state.tools.delete(callId);
        return;
      }
      case 'run_suspended':
      case 'run_completed':
      case 'run_failed':
      case 'budget_exhausted': {
        const outcome =
          event.type === 'run_suspended'
            ? 'suspended'
            : event.type === 'run_completed'
              ? 'completed'
              : 'failed';
        agent.addEvent(`veridex.${event.type}`, safeAttributes(event), time);
        endAll(state, time, { 'veridex.run.outcome': outcome });
        if (outcome === 'failed') {
          agent.setStatus({ code: SpanStatusCode.ERROR, message: event.type });
          agent.setAttribute('error.type', String(payload.code ?? event.type));
        }
        agent.setAttribute('veridex.run.outcome', outcome);
        agent.end(time);
        state.agent = undefined;
        return;
      }
    }
    // An event of a running tool without its call id (the treasury's screening, ceiling and
    // transfer events) belongs to that tool when it is the only one running.
    const only = state.tools.size === 1 ? [...state.tools.values()][0] : undefined;
    const target = (callId ? toolOf(state, event, time) : only) ?? agent;
    target.addEvent(`veridex.${event.type}`, safeAttributes(event), time);
  };

  const exporter: OtelExporter = {
    handle(events) {
      for (const event of events) {
        const key = `${event.threadId}\u0000${event.eventId}`;
        if (seen.has(key)) continue;
        seen.add(key);
        if (seen.size > window) seen.delete(seen.values().next().value as string);
        handleOne(event);
      }
    },
    attach(audit) {
      return audit.subscribe((events) => exporter.handle(events));
    },
    flush() {
      const now = new Date();
      for (const state of threads.values()) {
        endAll(state, now, { 'veridex.incomplete': true });
        state.agent?.setAttribute('veridex.incomplete', true);
        state.agent?.end(now);
        state.agent = undefined;
      }
      threads.clear();
    },
  };
  return exporter;
}
