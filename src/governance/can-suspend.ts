import { AsyncLocalStorageProviderSingleton } from '@langchain/core/singletons';

// The config key under which LangGraph hands a running graph's checkpointer to its nodes;
// `interrupt()` itself refuses to run without it.
const CHECKPOINTER_KEY = '__pregel_checkpointer';

/**
 * True when the current code runs inside a LangGraph graph that has a checkpointer, i.e.
 * where `interrupt()` can suspend the thread and a resume can continue it.
 */
export function canSuspend(): boolean {
  const config = AsyncLocalStorageProviderSingleton.getRunnableConfig() as
    | { configurable?: Record<string, unknown> }
    | undefined;
  return Boolean(config?.configurable?.[CHECKPOINTER_KEY]);
}
