import { CallbackManager } from '@langchain/core/callbacks/manager';
import type { ToolCall } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import { VeridexError } from '../errors/index.js';
import type { ToolRunResult } from '../tools/index.js';

/**
 * Runs one governed execution inside LangChain's tool callbacks, as `ToolNode` runs a tool:
 * `handleToolStart` with the call's id, then `handleToolEnd` with what the model is shown, or
 * `handleToolError`. So LangGraph's `tools` and `events` stream modes, LangSmith and any
 * callback handler see governed calls like any other (README "Governance events on the custom
 * stream"). Without callbacks in `config` it just runs.
 */
export async function withToolCallbacks(
  config: RunnableConfig | undefined,
  call: ToolCall,
  execute: () => Promise<ToolRunResult>,
): Promise<ToolRunResult> {
  const manager = config?.callbacks
    ? CallbackManager.configure(
        config.callbacks,
        undefined,
        config.tags,
        undefined,
        config.metadata,
      )
    : undefined;
  if (!manager) return execute();
  const run = await manager.handleToolStart(
    { lc: 1, type: 'not_implemented', id: ['veridex', 'governed_tool', call.name] },
    JSON.stringify(call.args ?? {}),
    undefined,
    undefined,
    undefined,
    undefined,
    call.name,
    call.id,
  );
  let result: ToolRunResult;
  try {
    result = await execute();
  } catch (error) {
    await run.handleToolError(error);
    throw error;
  }
  if (result.status === 'error') {
    await run.handleToolError(new VeridexError(result.code as never, result.message));
  } else {
    await run.handleToolEnd(result.content);
  }
  return result;
}
