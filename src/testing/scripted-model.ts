import {
  BaseChatModel,
  type BaseChatModelParams,
} from '@langchain/core/language_models/chat_models';
import { AIMessage, type BaseMessage, isAIMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { encode } from 'gpt-tokenizer';

/** A tool call the scripted model emits; `id` defaults to a deterministic `call_<turn>_<index>`. */
export interface ScriptedToolCall {
  name: string;
  args: Record<string, unknown>;
  id?: string;
}

/** One scripted model turn. */
export type ScriptedTurn =
  | string
  | AIMessage
  | { content?: string; toolCalls?: readonly ScriptedToolCall[] }
  | ((
      messages: readonly BaseMessage[],
    ) => string | AIMessage | { content?: string; toolCalls?: readonly ScriptedToolCall[] });

/** Options for {@link scriptedModel}. */
export interface ScriptedModelOptions extends BaseChatModelParams {
  /** What to do when the conversation has more AI turns than the script: throw (default) or repeat the last turn. */
  whenExhausted?: 'throw' | 'repeat-last';
}

/**
 * A real LangChain chat model that replays a script — for tests and offline demos, when there
 * is no API key. It is stateless: the turn it plays is the number of AI messages already in
 * the conversation, so it gives the same answer after a crash, a resume in another process,
 * or a node re-run. `bindTools` returns the model itself (the script decides tool calls).
 * Token usage is counted with a real tokenizer (cl100k-compatible `gpt-tokenizer`).
 */
export class ScriptedChatModel extends BaseChatModel {
  readonly turns: readonly ScriptedTurn[];
  readonly whenExhausted: 'throw' | 'repeat-last';
  /** Every message list the model was called with, for assertions. */
  readonly calls: BaseMessage[][] = [];

  constructor(turns: readonly ScriptedTurn[], options: ScriptedModelOptions = {}) {
    super(options);
    this.turns = turns;
    this.whenExhausted = options.whenExhausted ?? 'throw';
  }

  _llmType(): string {
    return 'veridex-scripted';
  }

  /** Returns the model itself: the script decides which tools are called. */
  override bindTools(_tools?: unknown, _kwargs?: unknown): this {
    return this;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.calls.push(messages);
    const turnIndex = messages.filter((message) => isAIMessage(message)).length;
    let turn = this.turns[turnIndex];
    if (turn === undefined) {
      if (this.whenExhausted === 'repeat-last' && this.turns.length > 0) turn = this.turns.at(-1)!;
      else {
        throw new Error(
          `scriptedModel has ${this.turns.length} turns but the conversation asks for turn ${turnIndex + 1}; add a turn or use whenExhausted: 'repeat-last'.`,
        );
      }
    }
    const message = toMessage(typeof turn === 'function' ? turn(messages) : turn, turnIndex);
    const inputTokens = messages.reduce((sum, item) => sum + encode(textOf(item)).length, 0);
    const outputTokens = encode(textOf(message)).length;
    message.usage_metadata = {
      input_tokens: inputTokens,
      output_tokens: outputTokens,
      total_tokens: inputTokens + outputTokens,
    };
    return { generations: [{ message, text: textOf(message) }] };
  }
}

function toMessage(
  turn: Exclude<ScriptedTurn, (...args: never[]) => unknown>,
  turnIndex: number,
): AIMessage {
  if (typeof turn === 'string') return new AIMessage(turn);
  if (turn instanceof AIMessage) return new AIMessage(turn);
  const spec = turn as { content?: string; toolCalls?: readonly ScriptedToolCall[] };
  return new AIMessage({
    content: spec.content ?? '',
    tool_calls: (spec.toolCalls ?? []).map((call, index) => ({
      id: call.id ?? `call_${turnIndex}_${index}`,
      name: call.name,
      args: call.args,
      type: 'tool_call' as const,
    })),
  });
}

function textOf(message: BaseMessage): string {
  const content =
    typeof message.content === 'string' ? message.content : JSON.stringify(message.content);
  const calls =
    isAIMessage(message) && message.tool_calls?.length ? JSON.stringify(message.tool_calls) : '';
  return content + calls;
}

/**
 * Creates a {@link ScriptedChatModel}.
 *
 * @example
 * const model = scriptedModel([
 *   { toolCalls: [{ name: 'get_balance', args: { currency: 'USD' } }] },
 *   'Your balance is 1,000,000.00 USD.',
 * ]);
 */
export function scriptedModel(
  turns: readonly ScriptedTurn[],
  options?: ScriptedModelOptions,
): ScriptedChatModel {
  return new ScriptedChatModel(turns, options);
}
