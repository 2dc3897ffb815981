import type { BaseMessage } from '@langchain/core/messages';
import { roleOf } from './count-tokens.js';

/** What a {@link Summarizer} is asked to do. */
export interface SummarizeRequest {
  /** The span to summarise, oldest first; tool calls always arrive with their results. */
  messages: readonly BaseMessage[];
  /** The summary of everything before `messages`, when an earlier summary is being extended. */
  previousSummary?: string;
  /** The summary must fit in this many tokens (the compiler cuts anything longer). */
  maxTokens: number;
  /** The compiler's exact token counter for plain text. */
  countTokens(text: string): number;
  signal?: AbortSignal;
}

/**
 * Condenses older conversation turns. `id` names the summariser and its settings: cached
 * summaries are only reused by a summariser with the same id.
 */
export interface Summarizer {
  readonly id: string;
  summarize(request: SummarizeRequest): Promise<string>;
}

/**
 * One line describing a message for a transcript: `User: …`, `Assistant: …`,
 * `Assistant called lookup({"id":1})`, `Tool lookup: …`. Text is clipped to `maxCharacters`.
 */
export function transcriptLine(message: BaseMessage, maxCharacters: number): string {
  const role = roleOf(message);
  const text = clip(plainText(message.content), maxCharacters);
  if (role === 'assistant') {
    const calls = (message as { tool_calls?: Array<{ name?: string; args?: unknown }> }).tool_calls;
    if (calls && calls.length > 0) {
      const rendered = calls
        .map(
          (call) =>
            `${call.name ?? 'tool'}(${clip(JSON.stringify(call.args ?? {}) ?? '', maxCharacters)})`,
        )
        .join(', ');
      return text ? `Assistant: ${text} — called ${rendered}` : `Assistant called ${rendered}`;
    }
    return `Assistant: ${text}`;
  }
  if (role === 'tool') return `Tool ${message.name ?? ''}: ${text}`.replace('Tool :', 'Tool:');
  if (role === 'user') return `User: ${text}`;
  return `${role[0]!.toUpperCase()}${role.slice(1)}: ${text}`;
}

/** The text of a message's content: text blocks joined, other blocks named. */
export function plainText(content: BaseMessage['content']): string {
  if (typeof content === 'string') return content;
  return (content as ReadonlyArray<unknown>)
    .map((block) => {
      if (typeof block === 'string') return block;
      const typed = block as { type?: string; text?: unknown };
      return typed.type === 'text' && typeof typed.text === 'string'
        ? typed.text
        : `[${typed.type ?? 'block'}]`;
    })
    .join(' ');
}

function clip(text: string, maxCharacters: number): string {
  // Only the start can survive the clip, so a megabyte tool output is not scanned whole.
  const start = text.length > maxCharacters * 2 ? text.slice(0, maxCharacters * 2) : text;
  const flat = start.replace(/\s+/g, ' ').trim();
  return flat.length <= maxCharacters ? flat : `${flat.slice(0, maxCharacters - 1)}…`;
}
