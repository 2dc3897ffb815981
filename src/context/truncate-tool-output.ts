import { type BaseMessage, ToolMessage } from '@langchain/core/messages';
import type { Tokenizer } from './tokenizer.js';

/** What {@link truncateToolOutput} did to one tool message. */
export interface ToolTruncation {
  /** The shortened message (same `tool_call_id`, `name`, `id` and `status`). */
  message: ToolMessage;
  /** Content tokens before and after. */
  fromTokens: number;
  toTokens: number;
}

const memo = new WeakMap<
  BaseMessage,
  { content: unknown; maxTokens: number; tokenizer: Tokenizer; result: ToolTruncation | undefined }
>();

/**
 * Shortens a tool message whose content exceeds `maxTokens`: it keeps the head and the tail
 * (where tools put headers and final results or errors) and puts `[truncated: N tokens]` in
 * between, N being the tokens removed. Returns undefined when the output already fits or is
 * not text. Results are memoised per message object.
 *
 * @example truncateToolOutput(hugeJsonResult, 500, tokenizerFor('o200k_base'))?.message.content
 */
export function truncateToolOutput(
  message: BaseMessage,
  maxTokens: number,
  tokenizer: Tokenizer,
): ToolTruncation | undefined {
  const cached = memo.get(message);
  if (
    cached &&
    cached.content === message.content &&
    cached.maxTokens === maxTokens &&
    cached.tokenizer === tokenizer
  ) {
    return cached.result;
  }
  const result = truncate(message, maxTokens, tokenizer);
  memo.set(message, { content: message.content, maxTokens, tokenizer, result });
  return result;
}

function truncate(
  message: BaseMessage,
  maxTokens: number,
  tokenizer: Tokenizer,
): ToolTruncation | undefined {
  const text = textOf(message.content);
  if (text === undefined) return undefined;
  // Each token is at least one character, so short text cannot be over the limit.
  if (text.length <= maxTokens) return undefined;
  const tokens = tokenizer.encode(text);
  if (tokens.length <= maxTokens) return undefined;
  const markerTokens = tokenizer.count(`\n[truncated: ${tokens.length} tokens]\n`);
  const keep = Math.max(0, maxTokens - markerTokens);
  const headCount = Math.ceil(keep / 2);
  const tailCount = keep - headCount;
  const removed = tokens.length - keep;
  const head = tokenizer.decode(tokens.slice(0, headCount));
  const tail = tailCount > 0 ? tokenizer.decode(tokens.slice(tokens.length - tailCount)) : '';
  const content = `${head}\n[truncated: ${removed} tokens]\n${tail}`;
  const tool = message as ToolMessage;
  return {
    message: new ToolMessage({
      content,
      tool_call_id: tool.tool_call_id,
      ...(tool.name === undefined ? {} : { name: tool.name }),
      ...(tool.id === undefined ? {} : { id: tool.id }),
      ...(tool.status === undefined ? {} : { status: tool.status }),
    }),
    fromTokens: tokens.length,
    toTokens: tokenizer.count(content),
  };
}

function textOf(content: BaseMessage['content']): string | undefined {
  if (typeof content === 'string') return content;
  const parts: string[] = [];
  for (const block of content as ReadonlyArray<unknown>) {
    if (typeof block === 'string') parts.push(block);
    else if (
      typeof block === 'object' &&
      block !== null &&
      (block as { type?: unknown }).type === 'text' &&
      typeof (block as { text?: unknown }).text === 'string'
    ) {
      parts.push((block as { text: string }).text);
    } else return undefined;
  }
  return parts.join('');
}
