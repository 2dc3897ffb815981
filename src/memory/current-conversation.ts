import { type BaseMessage, isBaseMessage } from '@langchain/core/messages';
import { getCurrentTaskInput } from '@langchain/langgraph';

/**
 * The messages of the graph state the current node runs on, or undefined outside a graph node
 * (or when its state has no messages): what a memory write's source is derived from.
 */
export function currentConversation(): BaseMessage[] | undefined {
  try {
    const state = getCurrentTaskInput<unknown>();
    const messages = Array.isArray(state)
      ? state
      : (state as { messages?: unknown } | undefined)?.messages;
    return Array.isArray(messages) && messages.every((message) => isBaseMessage(message))
      ? messages
      : undefined;
  } catch {
    return undefined;
  }
}
