import type { BaseMessage } from '@langchain/core/messages';
import { encodingFor } from './model-limits.js';
import { type Tokenizer, tokenizerFor } from './tokenizer.js';

/**
 * Chat-format overheads, as OpenAI documents them for its chat models (the "How to count
 * tokens with tiktoken" cookbook; `gpt-tokenizer` uses the same constants): every message is
 * wrapped in `<|start|>{role}<|message|>…<|end|>` (3 tokens plus the role), a `name` adds 1,
 * each tool call adds 3 around its name and JSON arguments, and every reply is primed with 3.
 */
export const MESSAGE_OVERHEAD_TOKENS = 3;
/** Added when a message carries a `name`. */
export const NAME_OVERHEAD_TOKENS = 1;
/** Added per tool call, around its name and JSON arguments. */
export const TOOL_CALL_OVERHEAD_TOKENS = 3;
/** Added once per request: the tokens that prime the assistant's reply. */
export const REPLY_PRIMING_TOKENS = 3;
/** What one image block is counted as: a 1024×1024 high-detail image on gpt-4o (85 + 4×170). */
export const DEFAULT_IMAGE_TOKENS = 765;

interface CachedCount {
  content: BaseMessage['content'];
  toolCalls: unknown;
  name: string | undefined;
  tokens: number;
}

/**
 * Counts the tokens of LangChain messages exactly (for OpenAI encodings) with the chat
 * format's per-message overhead. Counts are cached per message object, so a history that is
 * compiled again on the next turn is only counted for its new messages; a cached count is
 * reused only while the message's content, tool calls and name are the same values.
 */
export class MessageTokenCounter {
  readonly tokenizer: Tokenizer;
  readonly imageTokens: number;
  readonly #cache = new WeakMap<BaseMessage, CachedCount>();
  readonly #roles = new Map<string, number>();

  constructor(tokenizer: Tokenizer, options: { imageTokens?: number } = {}) {
    this.tokenizer = tokenizer;
    this.imageTokens = options.imageTokens ?? DEFAULT_IMAGE_TOKENS;
  }

  /** Tokens of plain text (no overhead). */
  text(text: string): number {
    return this.tokenizer.count(text);
  }

  /** Tokens one message occupies in a chat request, overhead included. */
  message(message: BaseMessage): number {
    const toolCalls = (message as { tool_calls?: unknown }).tool_calls;
    const cached = this.#cache.get(message);
    if (
      cached &&
      cached.content === message.content &&
      cached.toolCalls === toolCalls &&
      cached.name === message.name
    ) {
      return cached.tokens;
    }
    const tokens = this.#countMessage(message, toolCalls);
    this.#cache.set(message, { content: message.content, toolCalls, name: message.name, tokens });
    return tokens;
  }

  /** Tokens of a whole request: every message plus the reply priming. */
  messages(messages: readonly BaseMessage[]): number {
    let total = REPLY_PRIMING_TOKENS;
    for (const message of messages) total += this.message(message);
    return total;
  }

  /** Tokens of a message's content alone (text blocks exactly, images at `imageTokens`). */
  content(content: BaseMessage['content']): number {
    if (typeof content === 'string') return this.tokenizer.count(content);
    let total = 0;
    for (const block of content as ReadonlyArray<unknown>) {
      if (typeof block === 'string') total += this.tokenizer.count(block);
      else if (isTextBlock(block)) total += this.tokenizer.count(block.text);
      else if (isImageBlock(block)) total += this.imageTokens;
      else total += this.tokenizer.count(JSON.stringify(block) ?? '');
    }
    return total;
  }

  #countMessage(message: BaseMessage, toolCalls: unknown): number {
    let tokens =
      MESSAGE_OVERHEAD_TOKENS + this.#role(roleOf(message)) + this.content(message.content);
    if (message.name) tokens += this.tokenizer.count(message.name) + NAME_OVERHEAD_TOKENS;
    if (Array.isArray(toolCalls)) {
      for (const call of toolCalls as Array<{ name?: string; args?: unknown }>) {
        tokens += TOOL_CALL_OVERHEAD_TOKENS + this.tokenizer.count(call.name ?? '');
        tokens += this.tokenizer.count(JSON.stringify(call.args ?? {}) ?? '');
      }
    }
    return tokens;
  }

  #role(role: string): number {
    let tokens = this.#roles.get(role);
    if (tokens === undefined) {
      tokens = this.tokenizer.count(role);
      this.#roles.set(role, tokens);
    }
    return tokens;
  }
}

/** The chat-API role of a LangChain message (`human` → `user`, `ai` → `assistant`, …). */
export function roleOf(message: BaseMessage): string {
  const type = message.getType();
  switch (type) {
    case 'human':
      return 'user';
    case 'ai':
      return 'assistant';
    case 'generic':
      return (message as { role?: string }).role ?? 'user';
    default:
      return type;
  }
}

function isTextBlock(block: unknown): block is { type: 'text'; text: string } {
  return (
    typeof block === 'object' &&
    block !== null &&
    (block as { type?: unknown }).type === 'text' &&
    typeof (block as { text?: unknown }).text === 'string'
  );
}

function isImageBlock(block: unknown): boolean {
  const type = typeof block === 'object' && block !== null && (block as { type?: unknown }).type;
  return type === 'image_url' || type === 'image';
}

const counters = new Map<Tokenizer, MessageTokenCounter>();

/** The shared (caching) counter for `tokenizer`. */
export function messageCounterFor(tokenizer: Tokenizer): MessageTokenCounter {
  let counter = counters.get(tokenizer);
  if (!counter) {
    counter = new MessageTokenCounter(tokenizer);
    counters.set(tokenizer, counter);
  }
  return counter;
}

/** Options for {@link countTokens}. */
export interface CountTokensOptions {
  /** Chooses the encoding (see `encodingFor`). Default `gpt-4o` (`o200k_base`). */
  model?: string;
  /** A tokenizer to use instead of the model's encoding. */
  tokenizer?: Tokenizer;
}

/**
 * Exact token count, offline, with `gpt-tokenizer`: of a string (no overhead), of one
 * message (with its chat-format overhead), or of a request's message list (every message's
 * overhead plus the 3 tokens that prime the reply). Non-OpenAI models are approximated with
 * `o200k_base`.
 *
 * @example
 * countTokens('Hello, world!') // 4
 * countTokens([new SystemMessage('Be brief.'), new HumanMessage('Hi')], { model: 'gpt-4o' }) // 15
 */
export function countTokens(
  input: string | BaseMessage | readonly BaseMessage[],
  options: CountTokensOptions = {},
): number {
  const tokenizer =
    options.tokenizer ?? tokenizerFor(encodingFor(options.model ?? 'gpt-4o').encoding);
  if (typeof input === 'string') return tokenizer.count(input);
  const counter = messageCounterFor(tokenizer);
  return Array.isArray(input)
    ? counter.messages(input as readonly BaseMessage[])
    : counter.message(input as BaseMessage);
}
