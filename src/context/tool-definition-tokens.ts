import type { StructuredToolInterface } from '@langchain/core/tools';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import type { Tokenizer } from './tokenizer.js';

/** A tool bound to the model: a LangChain tool, or an OpenAI-style definition. */
export type ContextTool = StructuredToolInterface | Record<string, unknown>;

/** Added per tool definition in OpenAI's request format (`gpt-tokenizer` uses the same). */
export const TOOL_DEFINITION_OVERHEAD_TOKENS = 9;

const memo = new WeakMap<object, { tokenizer: Tokenizer; tokens: number }>();

/**
 * Tokens a tool definition occupies in the request: its OpenAI function form (name,
 * description, JSON schema) counted as JSON plus a fixed overhead. OpenAI renders tools in an
 * internal format, so this is an estimate within a few per cent; memoised per tool object.
 *
 * @example toolDefinitionTokens(weatherTool, tokenizerFor('o200k_base')) // e.g. 61
 */
export function toolDefinitionTokens(tool: ContextTool, tokenizer: Tokenizer): number {
  const cached = memo.get(tool);
  if (cached && cached.tokenizer === tokenizer) return cached.tokens;
  const definition = convertToOpenAITool(tool as StructuredToolInterface);
  const tokens = tokenizer.count(JSON.stringify(definition)) + TOOL_DEFINITION_OVERHEAD_TOKENS;
  memo.set(tool, { tokenizer, tokens });
  return tokens;
}
