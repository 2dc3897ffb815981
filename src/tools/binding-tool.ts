import { DynamicStructuredTool } from '@langchain/core/tools';
import { VeridexError } from '../errors/index.js';
import type { AnyGovernedTool } from './types.js';

/**
 * The schema a model binds for `tool` (agents read the tool list to bind it). It never runs:
 * every call goes through `runner`, the governed pipeline that owns the tool, and a direct
 * call is refused with `config_invalid`.
 */
export function bindingTool(tool: AnyGovernedTool, runner: string): DynamicStructuredTool {
  return new DynamicStructuredTool({
    name: tool.name,
    description: tool.description,
    schema: tool.input as never,
    func: async () => {
      throw new VeridexError('config_invalid', `"${tool.name}" runs only through ${runner}.`);
    },
  });
}
