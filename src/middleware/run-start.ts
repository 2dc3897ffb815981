import { type BaseMessage, isAIMessage, isHumanMessage } from '@langchain/core/messages';
import { type AppendEventInput, deriveEventId } from '../audit/index.js';
import { type HookRuntime, threadIdOf } from './call-scope.js';

/**
 * Which of the middleware's hooks writes a run's `run_started` event: the first one the
 * configuration already has, so that recording the run adds no hook of its own.
 * - `beforeModel`: the budget and memory step, before the run's first model call;
 * - `wrapModelCall`: the context compiler (or, with evidence, a bare wrapper), at that call;
 * - `toolCalls`: neither is configured, so the event joins the audit batch of the run's first
 *   governed tool calls (a run that calls no tool then writes no event: nothing was decided).
 *
 * LangChain wraps every model call of an agent with a `wrapModelCall` hook at ~3 % of a
 * one-tool run (see `bench/RESULTS.md`, toolnode): the minimal middleware has none.
 */
export type RunStartHook = 'beforeModel' | 'wrapModelCall' | 'toolCalls';

/**
 * The `run_started` event of the hook's run, when the hook is at the run's first model turn:
 * before the model call (`'before_model'`, no AI message since the user's last message) or
 * right after it (`'after_model'`, exactly one). Its id derives from where the run starts,
 * so every hook of that turn, and every re-run of it after a resume, writes it once.
 */
export function runStartedEvent(
  messages: readonly BaseMessage[],
  hook: HookRuntime,
  at: 'before_model' | 'after_model',
): AppendEventInput | undefined {
  const threadId = threadIdOf(hook);
  if (!threadId) return undefined;
  const start = messages.findLastIndex((message) => isHumanMessage(message));
  let turns = 0;
  for (let index = start + 1; index < messages.length; index++) {
    if (isAIMessage(messages[index]!)) turns++;
  }
  if (turns !== (at === 'before_model' ? 0 : 1)) return undefined;
  const runId = runIdOf(hook, threadId);
  return {
    threadId,
    runId,
    eventId: deriveEventId(threadId, 'run_started', runId, start),
    type: 'run_started',
    payload: { messages: start + 1 },
  };
}

/** The run a hook belongs to: LangGraph's `run_id`, else the thread. */
export function runIdOf(hook: HookRuntime, threadId: string): string {
  const runId = hook.configurable?.run_id;
  return typeof runId === 'string' && runId !== '' ? runId : threadId;
}
