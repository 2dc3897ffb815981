import {
  type BaseMessage,
  isAIMessage,
  type ToolCall,
  type ToolMessage,
} from '@langchain/core/messages';
import type { Command } from '@langchain/langgraph';
import { HOST_INVOKE, type HostedRuntime } from '../adapters/hosted-langchain-tool.js';
import type { AppendEventInput } from '../audit/index.js';
import {
  decideCalls,
  executePlan,
  failureOf,
  type GovernanceRuntime,
} from '../governance/index.js';
import { answerCall } from '../nodes/tool-answer.js';
import { isGraphBubbleUp } from '../tools/graph-signals.js';
import { canWait, type HookRuntime, hookScope } from './call-scope.js';
import type { MiddlewareTools } from './middleware-tools.js';
import type { RunClock } from './run-clock.js';
import { runStartedEvent } from './run-start.js';

/** What the tool-side hooks share. */
export interface ToolGovernance {
  runtime: GovernanceRuntime;
  tools: MiddlewareTools;
  clock: RunClock;
  signal?: AbortSignal | undefined;
  /** The tool side writes `run_started` (no model-side hook of the middleware does). */
  startsRuns: boolean;
}

/** The part of LangChain's `ToolCallRequest` the middleware reads. */
export interface ToolCallRequestLike {
  toolCall: ToolCall;
  tool: unknown;
  state: { messages: BaseMessage[] } & Record<string, unknown>;
  runtime: HookRuntime;
}

/**
 * The approval gate (`afterModel`): decides every call of the model's turn to a tool the
 * middleware knows — pins, arguments, policy — and, for those that need people, raises ONE
 * interrupt listing them (LangChain's HITL shape, with our fields), re-raised until each is
 * settled. It changes no state: the tool step re-decides each call (so a call changed after
 * its approval is caught as `proposal_mutation_detected`) and runs what is allowed. Only with
 * a checkpointer: without one there is nothing to resume, and calls needing approval are
 * refused at the tool with `approval_required`.
 */
export async function approvalGate(
  state: { messages: BaseMessage[] },
  hook: HookRuntime,
  governance: ToolGovernance,
): Promise<void> {
  if (!canWait(hook)) return;
  const messages = state.messages ?? [];
  const last = messages.findLast((message) => isAIMessage(message));
  if (!last || !isAIMessage(last) || !last.tool_calls?.length) return;
  const answered = new Set(
    messages
      .filter((message) => message.getType() === 'tool')
      .map((message) => (message as ToolMessage).tool_call_id),
  );
  const calls = last.tool_calls.filter(
    (call) => governance.tools.isKnown(call.name) && !(call.id && answered.has(call.id)),
  );
  if (calls.length === 0) return;
  const { scope, runtime } = hookScope(hook, messages, governance);
  try {
    await decideCalls(calls, runtime, scope, {
      suspend: true,
      ...runStart(messages, hook, governance),
    });
  } catch (error) {
    // Suspended for people: their time is not the run's.
    if (isGraphBubbleUp(error)) governance.clock.stop(scope.threadId);
    throw error;
  }
}

/**
 * `wrapToolCall`: one call through the governed pipeline — the same planner, policy,
 * approvals, ledger, sandbox and sanitiser as the governed tool node. Tools the middleware
 * was given run in its sandbox; the agent's own LangChain tools run through `handler` (so
 * middleware listed after this one still wraps them), inside the at-most-once ledger.
 */
export async function governToolCall(
  request: ToolCallRequestLike,
  handler: (request: never) => Promise<ToolMessage | Command> | ToolMessage | Command,
  governance: ToolGovernance,
): Promise<ToolMessage | Command> {
  const resolved = governance.tools.resolve(request.toolCall.name, request.tool);
  const call = resolved ? { ...request.toolCall, name: resolved.tool.name } : request.toolCall;
  const hook = request.runtime;
  const { scope, runtime } = hookScope(
    hook,
    request.state.messages ?? [],
    governance,
    (planned): HostedRuntime => ({
      toolCallId: planned.id ?? '',
      state: request.state,
      context: hook.context,
      store: hook.store ?? null,
      writer: hook.writer ?? null,
      ...(hook.configurable ? { config: { configurable: hook.configurable } } : {}),
      ...(resolved?.original
        ? {
            [HOST_INVOKE]: async (validated: ToolCall) =>
              handler({
                ...request,
                toolCall: { ...request.toolCall, args: validated.args },
                tool: resolved.original,
              } as never),
          }
        : {}),
    }),
  );
  try {
    const [plan] = await decideCalls([call], runtime, scope, {
      suspend: canWait(hook),
      ...(resolved ? { tool: resolved.tool } : {}),
      ...runStart(request.state.messages ?? [], hook, governance),
    });
    const result =
      plan!.kind === 'allowed'
        ? await executePlan(plan!, runtime, scope)
        : failureOf(plan!, runtime);
    return (await answerCall(request.toolCall, result, {
      hosted: governance.tools.hosted,
      scrubber: runtime.audit.scrubber,
      handleToolErrors: true,
      ...(runtime.maxOutputBytes ? { maxOutputBytes: runtime.maxOutputBytes } : {}),
    })) as ToolMessage | Command;
  } catch (error) {
    if (isGraphBubbleUp(error)) governance.clock.stop(scope.threadId);
    throw error;
  }
}

/** The run's `run_started` event, where the tool side records runs and this is their first turn. */
function runStart(
  messages: readonly BaseMessage[],
  hook: HookRuntime,
  governance: ToolGovernance,
): { leading?: AppendEventInput[] } {
  if (!governance.startsRuns) return {};
  const event = runStartedEvent(messages, hook, 'after_model');
  return event ? { leading: [event] } : {};
}
