import {
  type BaseMessage,
  isAIMessage,
  isHumanMessage,
  isToolMessage,
} from '@langchain/core/messages';
import type { MemoryWriteInput } from './types.js';
import type { WorkingMemoryItem } from './working-memory.js';

/** What the evolve node hands an extractor at the end of a run. */
export interface ExtractionInput {
  /** The messages of this run (since the last run's final answer). */
  messages: readonly BaseMessage[];
  workingMemory: readonly WorkingMemoryItem[];
  threadId: string;
}

/** An extractor's result: one episodic summary of the run and candidate facts. */
export interface MemoryExtraction {
  episode?: { summary: string; participants: readonly string[] };
  /** Candidate facts; each is still a proposal the policy decides on. */
  facts: readonly MemoryWriteInput[];
}

/** Distils a run into memory candidates (see `heuristicExtractor`, `llmExtractor`). */
export type MemoryExtractor = (
  input: ExtractionInput,
) => MemoryExtraction | Promise<MemoryExtraction>;

/** Plain text of a message (content blocks joined). */
export function messageText(message: BaseMessage): string {
  if (typeof message.content === 'string') return message.content;
  return message.content
    .map((block) => (typeof block === 'string' ? block : 'text' in block ? String(block.text) : ''))
    .join(' ');
}

/** Who spoke in these messages: `user`, `assistant`, and `tool:<name>` for each tool. */
export function participantsOf(messages: readonly BaseMessage[]): string[] {
  const participants = new Set<string>();
  for (const message of messages) {
    if (isHumanMessage(message)) participants.add('user');
    else if (isAIMessage(message)) participants.add('assistant');
    else if (isToolMessage(message)) participants.add(`tool:${message.name ?? 'unknown'}`);
  }
  return [...participants];
}

/** A compact transcript (`user: …`, `assistant: …`, `tool <name>: …`), each message cut to `limit`. */
export function transcript(messages: readonly BaseMessage[], limit = 600): string {
  return messages
    .map((message) => {
      const role = isHumanMessage(message)
        ? 'user'
        : isAIMessage(message)
          ? 'assistant'
          : isToolMessage(message)
            ? `tool ${message.name ?? ''}`.trim()
            : message.getType();
      const text = messageText(message).replace(/\s+/g, ' ').trim();
      return `${role}: ${text.length > limit ? `${text.slice(0, limit)}…` : text}`;
    })
    .filter((line) => !line.endsWith(': '))
    .join('\n');
}
