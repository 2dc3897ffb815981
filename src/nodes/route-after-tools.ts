import { type BaseMessage, isAIMessage, type ToolMessage } from '@langchain/core/messages';
import { END } from '@langchain/langgraph';
import { VERIDEX_CODE_KEY } from './governed-tool-node.js';

/** True when the tool messages answering the last AI turn report an exhausted budget. */
export function budgetExhausted(messages: readonly BaseMessage[]): boolean {
  const lastAi = messages.findLastIndex((message) => isAIMessage(message));
  return messages
    .slice(lastAi + 1)
    .some(
      (message) =>
        message.getType() === 'tool' &&
        (message as ToolMessage).additional_kwargs?.[VERIDEX_CODE_KEY] === 'budget_exhausted',
    );
}

/**
 * The edge after a governed tool node: back to `next` (your model node), or `END` when a
 * budget ran out — the run stops with every tool call answered and its state checkpointed.
 * Use it instead of a plain `addEdge('tools', 'model')`.
 *
 * @example graph.addConditionalEdges('tools', routeAfterTools('model'), ['model', END])
 */
export function routeAfterTools(next: string) {
  return (state: { messages: BaseMessage[] }): string =>
    budgetExhausted(state.messages) ? END : next;
}
