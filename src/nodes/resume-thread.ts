import type { RunnableConfig } from '@langchain/core/runnables';
import { Command } from '@langchain/langgraph';
import {
  APPROVALS_INTERRUPT,
  type ApprovalsInterrupt,
  RECHECK,
  type ResumeDecision,
} from './approval-interrupt.js';

/** The parts of a compiled graph {@link resumeThread} uses. */
export interface ResumableGraph<Output> {
  getState(config: RunnableConfig): Promise<{
    tasks: ReadonlyArray<{ interrupts?: ReadonlyArray<{ id?: string; value?: unknown }> }>;
  }>;
  // biome-ignore lint/suspicious/noExplicitAny: each compiled graph narrows Command to its own node names and update type.
  invoke(input: Command<any, any, any>, config: RunnableConfig): Promise<Output>;
}

/** The approval interrupts a thread is suspended on (empty when it is not waiting for approvals). */
export async function pendingApprovalInterrupts(
  graph: Pick<ResumableGraph<unknown>, 'getState'>,
  threadId: string,
): Promise<Array<{ id?: string; value: ApprovalsInterrupt }>> {
  const state = await graph.getState({ configurable: { thread_id: threadId } });
  return state.tasks
    .flatMap((task) => task.interrupts ?? [])
    .filter((pending): pending is { id?: string; value: ApprovalsInterrupt } => {
      return (pending.value as { type?: unknown } | undefined)?.type === APPROVALS_INTERRUPT;
    });
}

/**
 * Resumes a thread suspended on approvals. Without `decisions`, the governed tool node
 * re-reads its requests — use this after deciding through `ApprovalManager` or
 * `veridex approvals` from another process. With decisions, they are applied first (each
 * routed to the interrupt that lists its approval id). Quorum not met → the thread suspends
 * again with the updated status.
 *
 * @example
 * await approvals.decide(id, { decision: 'approve', approver: 'alice' });
 * const result = await resumeThread(graph, threadId);
 */
export async function resumeThread<Output>(
  graph: ResumableGraph<Output>,
  threadId: string,
  decisions?: ResumeDecision | readonly ResumeDecision[],
  config: RunnableConfig = {},
): Promise<Output> {
  const interrupts = await pendingApprovalInterrupts(graph, threadId);
  const list =
    decisions === undefined
      ? []
      : Array.isArray(decisions)
        ? decisions
        : [decisions as ResumeDecision];
  const valueFor = (pending: ApprovalsInterrupt) => {
    const ids = new Set(pending.approvals.map((approval) => approval.approvalId));
    const mine = list.filter((decision) => ids.has(decision.approvalId));
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
  return graph.invoke(new Command({ resume }), {
    ...config,
    configurable: { ...config.configurable, thread_id: threadId },
  });
}
