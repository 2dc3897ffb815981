import type { BaseMessage } from '@langchain/core/messages';

/**
 * One piece of history that is kept, summarised or dropped as a whole: a single message, or
 * an AI message with tool calls together with the tool messages answering it. Providers
 * reject a tool result whose call is missing (and a call whose result is missing), so a unit
 * is never split — the bug LangChain's summarisation middleware had more than once.
 */
export interface HistoryUnit {
  /** The unit's messages, in history order. */
  readonly messages: readonly BaseMessage[];
  /** Index of the first message in the history. */
  readonly start: number;
  /** True when the unit is a human message (a turn starts here). */
  readonly human: boolean;
}

/** Result of {@link groupHistory}. */
export interface GroupedHistory {
  units: HistoryUnit[];
  /** History indexes of tool messages whose call is not in the AI message just before them. */
  orphans: number[];
  /** History indexes of system messages (the compiler moves them into its one system message). */
  systemMessages: number[];
}

/**
 * Splits a history into atomic units. A tool message belongs to the AI message whose
 * `tool_calls` contain its `tool_call_id`, and must follow it (possibly after that call's
 * sibling results); any other tool message is an orphan and is reported, not emitted.
 * System messages are set aside too: providers want one system message, first.
 */
export function groupHistory(history: readonly BaseMessage[]): GroupedHistory {
  const units: HistoryUnit[] = [];
  const orphans: number[] = [];
  const systemMessages: number[] = [];
  let index = 0;
  while (index < history.length) {
    const message = history[index]!;
    const type = message.getType();
    if (type === 'tool' || type === 'system') {
      (type === 'tool' ? orphans : systemMessages).push(index);
      index += 1;
      continue;
    }
    const calls =
      type === 'ai' ? (message as { tool_calls?: Array<{ id?: string }> }).tool_calls : undefined;
    if (!calls || calls.length === 0) {
      units.push({ messages: [message], start: index, human: type === 'human' });
      index += 1;
      continue;
    }
    const open = new Set(calls.map((call) => call.id));
    let end = index + 1;
    while (end < history.length) {
      const next = history[end]!;
      if (next.getType() !== 'tool') break;
      const id = (next as { tool_call_id?: string }).tool_call_id;
      if (!open.delete(id)) break;
      end += 1;
    }
    units.push({ messages: history.slice(index, end), start: index, human: false });
    index = end;
  }
  return { units, orphans, systemMessages };
}
