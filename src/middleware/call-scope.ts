import { randomUUID } from 'node:crypto';
import { type BaseMessage, isAIMessage, type ToolCall } from '@langchain/core/messages';
import type { LangGraphRunnableConfig } from '@langchain/langgraph';
import { scopeMetadata } from '../governance/governance-runtime.js';
import type { CallScope, GovernanceRuntime } from '../governance/index.js';
import { sinkOf } from '../governance/stream-events.js';
import { BudgetExhaustedError } from '../nodes/run-budget.js';
import { MemoryIdempotencyStore, type ToolRuntime } from '../tools/index.js';
import type { RunClock } from './run-clock.js';

/** What LangChain's middleware hooks receive as `runtime`. */
export interface HookRuntime {
  configurable?: Record<string, unknown>;
  context?: unknown;
  store?: unknown;
  writer?: unknown;
  signal?: AbortSignal;
}

/** Where one hook's calls happen, and the governance they run under. */
export interface HookScope {
  scope: CallScope;
  runtime: GovernanceRuntime;
  /** False without a thread id: an ephemeral scope, nothing to come back to. */
  threaded: boolean;
}

/** The thread of a hook, if the run has one. */
export function threadIdOf(runtime: HookRuntime): string | undefined {
  const id = runtime.configurable?.thread_id;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/**
 * True when the run has a checkpointer, so `interrupt()` can suspend it and a resume continue
 * it; without one, calls needing approval are refused with `approval_required`.
 */
export function canWait(runtime: HookRuntime): boolean {
  return Boolean(runtime.configurable?.__pregel_checkpointer) && threadIdOf(runtime) !== undefined;
}

/**
 * The call scope of a hook: the thread (or an ephemeral scope of its own, with a ledger that
 * lives as long as the call), run, turn, request metadata, the run's abort signal joined with
 * the budget's, and the runtime each tool receives.
 */
export function hookScope(
  hook: HookRuntime,
  messages: readonly BaseMessage[],
  governance: { runtime: GovernanceRuntime; clock: RunClock; signal?: AbortSignal | undefined },
  runtimeFor?: (call: ToolCall) => ToolRuntime,
): HookScope {
  const threadId = threadIdOf(hook);
  const scopeId = threadId ?? `ephemeral-${randomUUID()}`;
  const runId = hook.configurable?.run_id;
  const emit = sinkOf(hook.writer);
  const signal = joinSignals([
    hook.signal,
    governance.signal,
    deadline(governance.clock.remaining(scopeId)),
  ]);
  return {
    threaded: threadId !== undefined,
    runtime: threadId
      ? governance.runtime
      : { ...governance.runtime, idempotency: new MemoryIdempotencyStore() },
    scope: {
      threadId: scopeId,
      runId: typeof runId === 'string' && runId !== '' ? runId : scopeId,
      turnIndex: Math.max(0, messages.filter((message) => isAIMessage(message)).length - 1),
      metadata: scopeMetadata(hook.configurable),
      ...(signal ? { signal } : {}),
      ...(runtimeFor ? { runtimeFor } : {}),
      ...(emit ? { emit } : {}),
    },
  };
}

/** A LangGraph config for the library's node functions, from a hook's runtime. */
export function configOf(hook: HookRuntime): LangGraphRunnableConfig {
  return {
    ...(hook.configurable ? { configurable: hook.configurable } : {}),
    ...(hook.signal ? { signal: hook.signal } : {}),
  } as LangGraphRunnableConfig;
}

function deadline(remainingMs: number | undefined): AbortSignal | undefined {
  if (remainingMs === undefined) return undefined;
  const controller = new AbortController();
  const reason = new BudgetExhaustedError('wall-clock limit reached');
  if (remainingMs <= 0) controller.abort(reason);
  else setTimeout(() => controller.abort(reason), remainingMs).unref();
  return controller.signal;
}

function joinSignals(signals: Array<AbortSignal | undefined>): AbortSignal | undefined {
  const present = signals.filter((signal): signal is AbortSignal => signal !== undefined);
  if (present.length <= 1) return present[0];
  return AbortSignal.any(present);
}
