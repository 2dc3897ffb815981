import { type ToolCall, ToolMessage } from '@langchain/core/messages';
import { VeridexError } from '../errors/index.js';
import type { ToolRunFailure } from '../tools/index.js';

/**
 * What to do when a tool itself fails, as in LangGraph's `ToolNode`: `true` (default) answers
 * with an error message, `false` re-throws, a string is the message the model reads, and a
 * function returns the message (or `undefined` to re-throw).
 */
export type HandleToolErrors =
  | boolean
  | string
  | ((error: unknown, call: ToolCall) => ToolMessage | undefined);

/** Key in an error ToolMessage's `additional_kwargs` holding the VeridexError code. */
export const VERIDEX_CODE_KEY = 'veridex_code';

/**
 * Failures of the tool itself — what `handleToolErrors` governs. Governance outcomes (denied,
 * rejected, expired, mutated, over budget, pin mismatch, sandbox violation, in doubt) are
 * always answered with an error message: the model must learn the call did not run, and no
 * option turns a refusal into a crash.
 */
const TOOL_ERROR_CODES: ReadonlySet<string> = new Set([
  'tool_failed',
  'tool_timeout',
  'tool_not_found',
  'input_invalid',
  'output_invalid',
]);

/** The ToolMessage answering a failed call, or a throw when `handle` says so. */
export function failureMessage(
  call: ToolCall,
  failure: ToolRunFailure,
  handle: HandleToolErrors,
): ToolMessage {
  const answer = (content: string) =>
    new ToolMessage({
      tool_call_id: call.id ?? '',
      name: call.name,
      status: 'error',
      content,
      additional_kwargs: { [VERIDEX_CODE_KEY]: failure.code },
    });
  // Governance outcomes name their code, so the model (and a reader of the thread) can tell
  // "refused" from "broken"; the tool's own failures read exactly as ToolNode words them, so
  // code written against ToolNode's messages keeps working. The code is in additional_kwargs.
  if (!TOOL_ERROR_CODES.has(failure.code))
    return answer(`Error [${failure.code}]: ${failure.message}`);
  if (handle === true) return answer(`Error: ${failure.message}\n Please fix your mistakes.`);
  const error = failure.error ?? new VeridexError(failure.code, failure.message);
  if (handle === false) throw error;
  if (typeof handle === 'string') return answer(handle);
  const message = handle(error, call);
  if (message === undefined || message === null) throw error;
  if (!ToolMessage.isInstance(message)) {
    throw new VeridexError(
      'config_invalid',
      `handleToolErrors returned ${typeof message}; it must return a ToolMessage or undefined.`,
    );
  }
  message.status ??= 'error';
  return message;
}
