import type { RunnableConfig } from '@langchain/core/runnables';
import { Command } from '@langchain/langgraph';
import { VeridexError } from '../errors/index.js';
import {
  APPROVALS_INTERRUPT,
  type ApprovalsInterrupt,
  approvalIdOf,
  RECHECK,
  type ResumeDecision,
} from '../governance/approval-interrupt.js';
import { shareAgentTools } from '../middleware/agent-tools.js';

/** The parts of a compiled graph {@link resumeThread} uses. */
export interface ResumableGraph<Output> {
  getState(config: RunnableConfig): Promise<{
    /**
     * A task's interrupts. A local graph names each by `id`; `RemoteGraph` (a graph on an Agent
     * Server, `@langchain/langgraph/remote`) by `interrupt_id`.
     */
    tasks: ReadonlyArray<{
      interrupts?: ReadonlyArray<{ id?: string; interrupt_id?: string; value?: unknown }>;
    }>;
    /** Set for a thread that has a checkpoint; absent for a thread id never run. */
    createdAt?: string;
    /** Nodes the thread will run next (empty once it finished). */
    next?: readonly string[];
  }>;
  // biome-ignore lint/suspicious/noExplicitAny: each compiled graph narrows Command to its own node names and update type.
  invoke(input: Command<any, any, any>, config: RunnableConfig): Promise<Output>;
}

/** The approval interrupts a thread is suspended on (empty when it is not waiting for approvals). */
export async function pendingApprovalInterrupts(
  graph: Pick<ResumableGraph<unknown>, 'getState'>,
  threadId: string,
): Promise<Array<{ id?: string; value: ApprovalsInterrupt }>> {
  return approvalInterruptsOf(await graph.getState({ configurable: { thread_id: threadId } }));
}

/** The approval interrupts a thread's snapshot (`graph.getState`) is suspended on. */
export function approvalInterruptsOf(
  state: Awaited<ReturnType<ResumableGraph<unknown>['getState']>>,
): Array<{ id?: string; value: ApprovalsInterrupt }> {
  return state.tasks
    .flatMap((task) => task.interrupts ?? [])
    .filter(
      (pending) => (pending.value as { type?: unknown } | undefined)?.type === APPROVALS_INTERRUPT,
    )
    .map((pending) => {
      const id = pending.id ?? pending.interrupt_id;
      return { ...(id === undefined ? {} : { id }), value: pending.value as ApprovalsInterrupt };
    });
}

/**
 * Resumes a thread suspended on approvals. Without `decisions`, the governed tool node
 * re-reads its requests — use this after deciding through `ApprovalManager` or
 * `veridex approvals` from another process. With decisions, they are applied first (each
 * routed to the interrupt that lists its approval id). Quorum not met → the thread suspends
 * again with the updated status, listing in its interrupt value every refused decision and why.
 *
 * @throws VeridexError `thread_not_found` for a thread id with no checkpoint;
 *   `thread_not_suspended` for a thread that is not waiting for approvals.
 * @example
 * await approvals.decide(id, signDecision({ request, decision: 'approve', approver: 'alice' }, aliceKey));
 * const result = await resumeThread(graph, threadId);
 */
export async function resumeThread<Output>(
  graph: ResumableGraph<Output>,
  threadId: string,
  decisions?: ResumeDecision | readonly ResumeDecision[],
  config: RunnableConfig = {},
): Promise<Output> {
  // A createAgent agent's own tools, for its governance middleware's approval gate.
  shareAgentTools(graph);
  const state = await graph.getState({
    ...config,
    configurable: { ...config.configurable, thread_id: threadId },
  });
  if (state.createdAt === undefined && state.tasks.length === 0) {
    throw new VeridexError(
      'thread_not_found',
      `Thread "${threadId.slice(0, 120)}" has no checkpoint: check the id, and that the graph uses the checkpointer the thread ran with.`,
    );
  }
  const interrupts = approvalInterruptsOf(state);
  if (interrupts.length === 0) {
    if (isThreadFinished(state)) {
      throw new VeridexError(
        'thread_not_suspended',
        `Thread "${threadId.slice(0, 120)}" is not waiting for approvals; there is nothing to resume.`,
      );
    }
    // Due to run a node but not suspended in it (an imported run, or a step a crash cut short,
    // possibly after all its tasks stored their writes): run on; LangGraph keeps the stored
    // writes and runs only what is left. A node raises its approval interrupts again, and then
    // the decisions are applied.
    const continued = await graph.invoke(null as never, withThread(config, threadId));
    const raised = await pendingApprovalInterrupts(graph, threadId);
    return decisions === undefined || raised.length === 0
      ? continued
      : resumeThread(graph, threadId, decisions, config);
  }
  const list: readonly unknown[] =
    decisions === undefined ? [] : Array.isArray(decisions) ? decisions : [decisions];
  const valueFor = (pending: ApprovalsInterrupt) => {
    const ids = new Set(pending.approvals.map((approval) => approval.approvalId));
    const mine = list.filter((decision) => ids.has(approvalIdOf(decision) ?? ''));
    return mine.length === 0 ? RECHECK : mine;
  };
  // One interrupt: a plain resume value, so decisions naming unknown ids reach the node
  // (which refuses them with a security event) instead of being dropped here.
  const resume =
    interrupts.length <= 1
      ? list.length > 0
        ? [...list]
        : RECHECK
      : Object.fromEntries(interrupts.map((pending) => [pending.id, valueFor(pending.value)]));
  return graph.invoke(new Command({ resume }), withThread(config, threadId));
}

/**
 * Whether a thread with a checkpoint has nothing left to run. `next` alone does not say: after
 * a crash between a step's writes (`putWrites`) and its checkpoint (`put`), LangGraph's snapshot
 * lists the step's finished tasks in `tasks` (with their results) but not in `next`, although
 * the nodes after them have not run. A finished thread has neither.
 */
export function isThreadFinished(state: {
  next?: readonly string[];
  tasks: ReadonlyArray<unknown>;
}): boolean {
  return (state.next ?? []).length === 0 && state.tasks.length === 0;
}

function withThread(config: RunnableConfig, threadId: string): RunnableConfig {
  return { ...config, configurable: { ...config.configurable, thread_id: threadId } };
}
