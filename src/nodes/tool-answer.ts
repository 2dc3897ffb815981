import { type ToolCall, ToolMessage } from '@langchain/core/messages';
import type { Command } from '@langchain/langgraph';
import { decodeHostResult } from '../adapters/host-result.js';
import type { SecretScrubber } from '../audit/index.js';
import type { ToolRunResult } from '../tools/index.js';
import { failureMessage, type HandleToolErrors } from './tool-errors.js';

/** How a host (the governed tool node, the createAgent middleware) answers a governed call. */
export interface AnswerOptions {
  /** Governed name → the plain LangChain tool's own name, for the tools it hosts. */
  hosted: ReadonlyMap<string, string>;
  scrubber: SecretScrubber;
  maxOutputBytes?: number;
  handleToolErrors: HandleToolErrors;
}

/**
 * The ToolMessage answering one governed call — or a hosted tool's own ToolMessage or
 * Command, rebuilt from what the pipeline stored: failures as error messages (see
 * `handleToolErrors`), governed tools' sanitised output as a success message.
 */
export async function answerCall(
  call: ToolCall,
  result: ToolRunResult,
  options: AnswerOptions,
): Promise<ToolMessage | Command> {
  if (result.status === 'error') return failureMessage(call, result, options.handleToolErrors);
  const hostedName = options.hosted.get(result.toolName);
  if (hostedName !== undefined) {
    return decodeHostResult(result, {
      name: hostedName,
      toolCallId: call.id ?? '',
      scrubber: options.scrubber,
      ...(options.maxOutputBytes ? { maxOutputBytes: options.maxOutputBytes } : {}),
    });
  }
  return new ToolMessage({
    tool_call_id: call.id ?? '',
    name: result.toolName,
    status: 'success',
    content: result.content,
    ...(result.artifact !== undefined ? { artifact: result.artifact } : {}),
  });
}
