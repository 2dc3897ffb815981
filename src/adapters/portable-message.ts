import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  isAIMessage,
  isHumanMessage,
  isSystemMessage,
  isToolMessage,
  SystemMessage,
  ToolMessage,
} from '@langchain/core/messages';
import { VeridexError } from '../errors/index.js';

/** Message content: plain text, or JSON-safe content parts (text, images, …) as LangChain has them. */
export type PortableContent = string | ReadonlyArray<Record<string, unknown>>;

/** A tool call requested by the assistant. */
export interface PortableToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

/** A chat message in the portable `veridex.run/v1` format, independent of LangChain classes. */
export type PortableMessage =
  | { role: 'system'; id?: string; content: PortableContent }
  | { role: 'user'; id?: string; name?: string; content: PortableContent }
  | {
      role: 'assistant';
      id?: string;
      name?: string;
      content: PortableContent;
      toolCalls?: PortableToolCall[];
    }
  | {
      role: 'tool';
      id?: string;
      toolCallId: string;
      name?: string;
      content: PortableContent;
      status?: 'success' | 'error';
    };

function content(message: BaseMessage): PortableContent {
  return typeof message.content === 'string'
    ? message.content
    : (JSON.parse(JSON.stringify(message.content)) as Array<Record<string, unknown>>);
}

function optional<K extends string, V>(key: K, value: V | undefined | null): { [P in K]?: V } {
  return (value === undefined || value === null || value === '' ? {} : { [key]: value }) as {
    [P in K]?: V;
  };
}

/**
 * Converts a LangChain message to a portable one (system, user, assistant with tool calls,
 * tool result). Lossless for those four kinds; provider-specific extras are dropped.
 * @throws VeridexError `import_invalid` for message kinds the format has no role for.
 */
export function toPortableMessage(message: BaseMessage): PortableMessage {
  const id = optional('id', message.id);
  if (isSystemMessage(message)) return { role: 'system', ...id, content: content(message) };
  if (isHumanMessage(message))
    return { role: 'user', ...id, ...optional('name', message.name), content: content(message) };
  if (isAIMessage(message)) {
    const toolCalls = (message.tool_calls ?? []).map((call) => ({
      id: call.id ?? '',
      name: call.name,
      arguments: call.args as Record<string, unknown>,
    }));
    return {
      role: 'assistant',
      ...id,
      ...optional('name', message.name),
      content: content(message),
      ...(toolCalls.length > 0 ? { toolCalls } : {}),
    };
  }
  if (isToolMessage(message)) {
    return {
      role: 'tool',
      ...id,
      toolCallId: message.tool_call_id,
      ...optional('name', message.name),
      content: content(message),
      ...optional('status', message.status),
    };
  }
  throw new VeridexError(
    'import_invalid',
    `Message type "${message.getType()}" has no portable role; expected system, human, ai or tool messages.`,
  );
}

/** Converts a portable message back to the LangChain class it came from. */
export function fromPortableMessage(message: PortableMessage): BaseMessage {
  const base = { content: message.content as string, ...(message.id ? { id: message.id } : {}) };
  switch (message.role) {
    case 'system':
      return new SystemMessage(base);
    case 'user':
      return new HumanMessage({ ...base, ...optional('name', message.name) });
    case 'assistant':
      return new AIMessage({
        ...base,
        ...optional('name', message.name),
        tool_calls: (message.toolCalls ?? []).map((call) => ({
          id: call.id,
          name: call.name,
          args: call.arguments,
          type: 'tool_call' as const,
        })),
      });
    case 'tool':
      return new ToolMessage({
        ...base,
        tool_call_id: message.toolCallId,
        ...optional('name', message.name),
        ...optional('status', message.status),
      });
    default:
      throw new VeridexError(
        'import_invalid',
        `Unknown portable message role ${JSON.stringify((message as { role?: unknown }).role)}; expected system, user, assistant or tool.`,
      );
  }
}
