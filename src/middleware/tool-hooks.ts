import {
  type BaseMessage,
  isAIMessage,
  type ToolCall,
  type ToolMessage,
} from '@langchain/core/messages';
import { DynamicStructuredTool } from '@langchain/core/tools';
import type { Command } from '@langchain/langgraph';
import { z } from 'zod';
import { HOST_INVOKE, type HostedRuntime } from '../adapters/hosted-langchain-tool.js';
import { type AppendEventInput, canonicalJson } from '../audit/index.js';
import { VeridexError } from '../errors/index.js';
import type { FailedPlan } from '../governance/call-planner.js';
import {
  decideCalls,
  executePlan,
  failureOf,
  type GovernanceRuntime,
} from '../governance/index.js';
import { GOVERNANCE_EVENT, type GovernanceStreamEvent } from '../governance/stream-events.js';
import { answerCall } from '../nodes/tool-answer.js';
import { isGraphBubbleUp } from '../tools/graph-signals.js';
import type { ToolRunResult } from '../tools/index.js';
import { recordRefusal } from '../tools/record-refusal.js';
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
  /** What a rejected call does to the rest of its turn (default `run_others`). */
  onRejection?: 'run_others' | 'return_to_model' | undefined;
}

/** The part of LangChain's `ToolCallRequest` the middleware reads. */
export interface ToolCallRequestLike {
  toolCall: ToolCall;
  tool: unknown;
  state: { messages: BaseMessage[] } & Record<string, unknown>;
  runtime: HookRuntime;
}

/** What the approval gate hands back to the agent: nothing, or the turn answered and ended. */
export type GateResult = undefined | { messages: ToolMessage[]; jumpTo: 'model' };

/**
 * The approval gate (`afterModel`): decides every call of the model's turn — to the
 * middleware's tools and to createAgent's own (once seen, see `MiddlewareTools.learn`) —
 * pins, arguments, policy, and for those that need people raises ONE interrupt listing them
 * in call order (LangChain's HITL shape, with our fields), re-raised until each is settled:
 * no call of the turn runs before then. It changes no state, unless `onRejection` is
 * `return_to_model` and a call was rejected: then it answers every call of the turn (none
 * runs) and returns to the model, as LangChain's `humanInTheLoopMiddleware` does. Otherwise
 * the tool step re-decides each call (so a call changed after its approval is caught as
 * `proposal_mutation_detected`) and runs what is allowed. Only with a checkpointer: without
 * one there is nothing to resume, and calls needing approval are refused at the tool with
 * `approval_required`.
 */
export async function approvalGate(
  state: { messages: BaseMessage[] },
  hook: HookRuntime,
  governance: ToolGovernance,
): Promise<GateResult> {
  if (!canWait(hook)) return undefined;
  const messages = state.messages ?? [];
  const last = messages.findLast((message) => isAIMessage(message));
  if (!last || !isAIMessage(last) || !last.tool_calls?.length) return undefined;
  const answered = new Set(
    messages
      .filter((message) => message.getType() === 'tool')
      .map((message) => (message as ToolMessage).tool_call_id),
  );
  const open = last.tool_calls.filter((call) => !(call.id && answered.has(call.id)));
  const unseen = open.filter((call) => !governance.tools.gated(call.name));
  if (!governance.tools.learnedAgentTools && unseen.length > 0) {
    // A process that has not seen createAgent's tools (resumed by a plain invoke) cannot tell
    // them from tools that do not exist: deciding the turn without them would let its other
    // calls run early and drop the decisions meant for them. The thread stays resumable.
    const names = unseen.map((call) => JSON.stringify(call.name.slice(0, 64))).join(', ');
    throw new VeridexError(
      'config_invalid',
      `governanceMiddleware: this process has not seen the agent's own tools yet, and the turn calls ${names}. Resume the thread with resumeThread(agent, …) or startResumer({ graph: agent, … }), or call governance.useAgentTools(tools) at start-up (README "Approvals in LangChain's HITL protocol").`,
    );
  }
  const calls = open.flatMap((call) => {
    const resolved = governance.tools.gated(call.name);
    return resolved ? [{ ...call, name: resolved.tool.name }] : [];
  });
  if (calls.length === 0) return undefined;
  const hooked = hookScope(hook, messages, governance);
  const { runtime } = hooked;
  // The tool step decides each call again and streams how it ends; the gate streams only what
  // waits for people (and, ending a turn, what it refused).
  const emit = hooked.scope.emit;
  const scope = emit
    ? {
        ...hooked.scope,
        emit: (event: GovernanceStreamEvent) => {
          if (event.event === 'approval_requested') emit(event);
        },
      }
    : hooked.scope;
  let plans: Awaited<ReturnType<typeof decideCalls>>;
  try {
    plans = await decideCalls(calls, runtime, scope, {
      suspend: true,
      ...runStart(messages, hook, governance),
    });
  } catch (error) {
    // Suspended for people: their time is not the run's.
    if (isGraphBubbleUp(error)) governance.clock.stop(scope.threadId);
    throw error;
  }
  if (governance.onRejection !== 'return_to_model') return undefined;
  const rejected = plans.find(
    (plan) => plan.kind === 'failed' && plan.code === 'approval_rejected',
  );
  if (!rejected) return undefined;
  const planned = new Map(plans.map((plan) => [plan.call.id, plan] as const));
  const answers = await Promise.all(
    open.map(async (call) => {
      const plan = planned.get(call.id);
      const failed: FailedPlan =
        plan?.kind === 'failed'
          ? plan
          : {
              kind: 'failed',
              call,
              code: 'turn_rejected',
              message: `Not run: another call of this turn ("${rejected.call.name}") was rejected by its approvers.`,
            };
      emit?.({
        type: GOVERNANCE_EVENT,
        threadId: scope.threadId,
        toolCallId: call.id ?? '',
        tool: call.name,
        event: 'call_refused',
        code: failed.code,
      });
      // The answer lives in the message history, which summarisation may drop: the ledger
      // keeps the refusal, so the same call id proposed again never runs on this turn's approvals.
      const resolved = governance.tools.gated(call.name);
      if (resolved && call.id) {
        await recordRefusal(
          resolved.tool,
          { threadId: scope.threadId, toolCallId: call.id },
          { code: failed.code, message: failed.message },
          runtime.idempotency,
        );
      }
      return (await answerCall(call, failureOf(failed, runtime), {
        hosted: governance.tools.hosted,
        scrubber: runtime.audit.scrubber,
        handleToolErrors: true,
      })) as ToolMessage;
    }),
  );
  return { messages: answers, jumpTo: 'model' };
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
  const reused = reusedInTurn(request);
  if (reused) {
    return (await answerCall(request.toolCall, failureOf(reused, governance.runtime), {
      hosted: governance.tools.hosted,
      scrubber: governance.runtime.audit.scrubber,
      handleToolErrors: true,
    })) as ToolMessage;
  }
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
      // A call the gate did not decide waits here, one interrupt per call: a resume value
      // reaches every such interrupt, so bare decisions matched by position are refused.
      positional: false,
      ...(resolved ? { tool: resolved.tool } : {}),
      ...runStart(request.state.messages ?? [], hook, governance),
    });
    const answer = async (result: ToolRunResult) =>
      (await answerCall(request.toolCall, result, {
        hosted: governance.tools.hosted,
        scrubber: runtime.audit.scrubber,
        handleToolErrors: true,
        ...(runtime.maxOutputBytes ? { maxOutputBytes: runtime.maxOutputBytes } : {}),
      })) as ToolMessage | Command;
    if (plan!.kind !== 'allowed') return answer(failureOf(plan!, runtime));
    const allowed = plan!;
    if (resolved?.original) return answer(await executePlan(allowed, runtime, scope));
    // The middleware's own tools run in the sandbox, not through the agent's tool node: hand
    // the node a tool that runs the governed execution, so its callbacks (LangGraph's `tools`
    // and `events` stream modes, tracing) see the call like any other.
    return handler({
      ...request,
      tool: governedExecution(request.toolCall, async () =>
        answer(await executePlan(allowed, runtime, scope)),
      ),
    } as never);
  } catch (error) {
    if (isGraphBubbleUp(error)) governance.clock.stop(scope.threadId);
    throw error;
  }
}

/**
 * A LangChain tool standing for one governed execution, named as the call: the agent's tool
 * node invokes it inside its callbacks; `run` decides nothing, the call was decided already.
 */
function governedExecution(
  call: ToolCall,
  run: () => Promise<ToolMessage | Command>,
): DynamicStructuredTool {
  return new DynamicStructuredTool({
    name: call.name,
    description: 'A governed tool call, executed under the approvals, sandbox and ledger.',
    schema: z.record(z.string(), z.unknown()),
    func: run as never,
  });
}

/**
 * The answer for a call whose id an earlier call of its turn has with other arguments (each
 * reaches the tool step on its own): only the first is ever decided and run; an identical
 * repeat goes on to the ledger, which runs the call once.
 */
function reusedInTurn(request: ToolCallRequestLike): FailedPlan | undefined {
  const { toolCall } = request;
  if (!toolCall.id) return undefined;
  const turn = (request.state.messages ?? []).findLast((message) => isAIMessage(message));
  const first =
    turn && isAIMessage(turn)
      ? turn.tool_calls?.find((call) => call.id === toolCall.id)
      : undefined;
  if (
    !first ||
    (first.name === toolCall.name && canonicalJson(first.args) === canonicalJson(toolCall.args))
  ) {
    return undefined;
  }
  return {
    kind: 'failed',
    call: toolCall,
    code: 'tool_call_id_reused',
    message: `Not run: another call of this turn has the id "${toolCall.id.slice(0, 120)}"; each call needs its own id.`,
  };
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
