import { type BaseMessage, SystemMessage } from '@langchain/core/messages';
import type { LangGraphRunnableConfig } from '@langchain/langgraph';
import { type AuditLog, deriveEventId } from '../audit/index.js';
import { runIdOf } from './evidence-node.js';
import type { GovernanceState } from './governance-annotation.js';
import { tokensUsedThisRun } from './run-budget.js';

/** A chat model with its tools bound (anything with `invoke(messages)`). */
export interface InvokableModel {
  invoke(messages: BaseMessage[], options?: { signal?: AbortSignal }): Promise<BaseMessage>;
}

/** Options for {@link agentModelNode}. */
export interface AgentModelNodeOptions {
  model: InvokableModel;
  /** System prompt used when no context node compiled `llmInputMessages`. */
  instructions: string;
  audit: AuditLog;
  /** Token budget of one run (checked before each model call). */
  maxTokens?: number;
}

/**
 * The prebuilt agent's model node: checks the run's token budget, then calls the model with
 * the compiled context (`llmInputMessages`) or, without a context node, the instructions
 * plus the history. Each call is a `turn_started` event; an exhausted budget is a
 * `budget_exhausted` event and sets `budgetExhausted` so routing ends the run.
 */
export function agentModelNode(options: AgentModelNodeOptions) {
  return async function model(
    state: GovernanceState,
    config: LangGraphRunnableConfig,
  ): Promise<Partial<GovernanceState>> {
    const threadId = String(config.configurable?.thread_id ?? '');
    const runId = runIdOf(config, threadId);
    const used = tokensUsedThisRun(state.messages);
    const turnIndex = state.messages.filter((message) => message.getType() === 'ai').length;
    if (options.maxTokens !== undefined && used >= options.maxTokens) {
      await options.audit.append({
        threadId,
        runId,
        turnIndex,
        eventId: deriveEventId(threadId, 'budget_exhausted', runId, 'tokens'),
        type: 'budget_exhausted',
        payload: { budget: 'tokens', used, limit: options.maxTokens },
      });
      return { budgetExhausted: true };
    }
    await options.audit.append({
      threadId,
      runId,
      turnIndex,
      eventId: deriveEventId(threadId, 'turn_started', runId, turnIndex),
      type: 'turn_started',
      payload: { turnIndex, tokensUsed: used },
    });
    const input =
      state.llmInputMessages.length > 0
        ? state.llmInputMessages
        : [new SystemMessage(options.instructions), ...state.messages];
    const response = await options.model.invoke(
      input,
      config.signal ? { signal: config.signal } : {},
    );
    return { messages: [response] };
  };
}
