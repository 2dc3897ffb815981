import { type BaseMessage, isSystemMessage } from '@langchain/core/messages';
import { type AuditLog, deriveEventId, type EvidenceSigner } from '../audit/index.js';
import type { ContextCompiler, ContextMemory, ContextTool } from '../context/index.js';
import type { Database } from '../db/index.js';
import type { MemoryManager } from '../memory/index.js';
import { type SealedEvidence, sealThreadEvidence } from '../nodes/evidence-node.js';
import type { MemoryNodesOptions, memoryNodes } from '../nodes/memory-nodes.js';
import { budgetExhausted } from '../nodes/route-after-tools.js';
import { tokensUsedThisRun } from '../nodes/run-budget.js';
import { configOf, type HookRuntime, threadIdOf } from './call-scope.js';
import type { RunClock } from './run-clock.js';
import { type RunStartHook, runIdOf, runStartedEvent } from './run-start.js';

/** Where and how runs are sealed into evidence bundles (`afterAgent`). */
export interface MiddlewareEvidenceOptions {
  /** Who signs (the agent's key, plus counter-signers). */
  signers: readonly EvidenceSigner[];
  /** Write each bundle to `<dir>/<threadId>.json`. */
  outDir?: string;
  /**
   * Keep each bundle in this database (default: the middleware's `db`), where the approvals
   * service serves it; `false` to keep none.
   */
  db?: Database | false;
  /** Signed alongside the events, e.g. `{ appId, agentId }`. */
  subject?: Record<string, unknown>;
  /** Receives every sealed bundle. */
  onSealed?: (threadId: string, sealed: SealedEvidence) => void;
}

/** Four-tier memory around the model: recall before it, distil the run after it. */
export interface MiddlewareMemoryOptions extends MemoryNodesOptions {
  manager: MemoryManager;
}

/** What the model-side hooks share. */
export interface ModelGovernance {
  audit: AuditLog;
  clock: RunClock;
  maxTokens?: number | undefined;
  signal?: AbortSignal | undefined;
  context?: ContextCompiler | undefined;
  memory?: ReturnType<typeof memoryNodes> | undefined;
  evidence?: MiddlewareEvidenceOptions | undefined;
  /** The last bundle sealed per thread. */
  sealed: Map<string, SealedEvidence>;
  /** The hook that starts runs (their clock and `run_started` event). */
  runStart: RunStartHook;
}

type State = { messages: BaseMessage[] } & Record<string, unknown>;

/**
 * A run starts (its first model call since the user's last message): its clock, and a
 * `run_started` event. Called from the hook that {@link ModelGovernance.runStart} names, so the
 * middleware adds no graph step for it.
 */
export async function startRunOnFirstCall(
  messages: readonly BaseMessage[],
  hook: HookRuntime,
  model: ModelGovernance,
): Promise<void> {
  const event = runStartedEvent(messages, hook, 'before_model');
  if (!event) return;
  model.clock.start(event.threadId);
  await model.audit.append(event);
}

/**
 * `beforeModel`: the run budgets — tokens spent this run, tool fuel (a `budget_exhausted`
 * answer from the tools), wall clock and cancellation — end the run cleanly (`jumpTo: 'end'`,
 * a `budget_exhausted` event) before another model call; then memory recall. Where this step
 * exists it is the hook that starts runs (`runStart` is `'beforeModel'`).
 */
export async function beforeModelCall(state: State, hook: HookRuntime, model: ModelGovernance) {
  await startRunOnFirstCall(state.messages, hook, model);
  const threadId = threadIdOf(hook);
  const exhausted = (() => {
    const used = tokensUsedThisRun(state.messages);
    if (model.maxTokens !== undefined && used >= model.maxTokens)
      return { budget: 'tokens', used, limit: model.maxTokens };
    if (budgetExhausted(state.messages)) return { budget: 'tool_calls' };
    if (threadId && model.clock.exhausted(threadId)) return { budget: 'wall_clock' };
    if (model.signal?.aborted) return { budget: 'cancelled' };
    return undefined;
  })();
  if (exhausted) {
    if (threadId) {
      const runId = runIdOf(hook, threadId);
      await model.audit.append({
        threadId,
        runId,
        eventId: deriveEventId(threadId, 'budget_exhausted', runId, exhausted.budget),
        type: 'budget_exhausted',
        payload: exhausted,
      });
    }
    return { jumpTo: 'end' as const };
  }
  if (!model.memory) return undefined;
  return model.memory.retrieve(state as never, configOf(hook));
}

/** The part of LangChain's `ModelRequest` the context step reads and rewrites. */
export interface ModelRequestLike {
  messages: BaseMessage[];
  systemPrompt?: string;
  tools?: readonly unknown[];
  state: State;
  runtime: HookRuntime;
}

/**
 * `wrapModelCall`: the context compiler builds the model's input within the effective window
 * — system prompt and procedures, packed memories, compressed history that never splits a
 * tool call from its result — and the model sees that instead of the raw history (the stored
 * `messages` stay untouched).
 */
export async function compileModelRequest<Request extends ModelRequestLike>(
  request: Request,
  model: ModelGovernance,
): Promise<Request> {
  if (model.runStart === 'wrapModelCall') {
    await startRunOnFirstCall(request.state.messages ?? request.messages, request.runtime, model);
  }
  if (!model.context) return request;
  const threadId = threadIdOf(request.runtime);
  const memories = request.state.memories as readonly ContextMemory[] | undefined;
  const procedural = request.state.procedural as readonly string[] | undefined;
  const { messages } = await model.context.compile({
    history: request.messages,
    ...(request.systemPrompt ? { system: request.systemPrompt } : {}),
    ...(memories?.length ? { memories } : {}),
    ...(procedural?.length ? { procedural } : {}),
    ...(request.tools ? { tools: request.tools as readonly ContextTool[] } : {}),
    ...(threadId ? { threadId } : {}),
    ...(request.runtime.signal ? { signal: request.runtime.signal } : {}),
  });
  const system = messages.filter((message) => isSystemMessage(message));
  const rest = messages.filter((message) => !isSystemMessage(message));
  const systemPrompt = system.map((message) => message.text).join('\n\n');
  return { ...request, messages: rest, ...(systemPrompt ? { systemPrompt } : {}) };
}

/** `afterAgent`: memory distils the run; the run is sealed into a signed evidence bundle. */
export async function finishRun(state: State, hook: HookRuntime, model: ModelGovernance) {
  const threadId = threadIdOf(hook);
  if (threadId) model.clock.stop(threadId);
  const update = model.memory
    ? await model.memory.evolve(state as never, configOf(hook))
    : undefined;
  if (threadId && model.evidence) {
    const sealed = await sealThreadEvidence(
      threadId,
      {
        audit: model.audit,
        signers: model.evidence.signers,
        ...(model.evidence.outDir ? { outDir: model.evidence.outDir } : {}),
        ...(model.evidence.db ? { db: model.evidence.db } : {}),
        ...(model.evidence.subject ? { subject: model.evidence.subject } : {}),
      },
      { runId: runIdOf(hook, threadId) },
    );
    model.sealed.set(threadId, sealed);
    model.evidence.onSealed?.(threadId, sealed);
  }
  return update;
}
