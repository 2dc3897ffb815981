import type { RunnableConfig } from '@langchain/core/runnables';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { canonicalJson } from '../audit/index.js';

// LangGraph bookkeeping in `versions_seen`, not graph nodes.
const NOT_NODES = new Set(['__input__', '__start__']);

/**
 * The node that wrote a checkpoint: the one whose `versions_seen` entry the checkpoint changed
 * relative to its parent (a node records the channel versions it consumed each time it runs,
 * and `updateState(…, asNode)` records them for `asNode`). An importer writes the state "as"
 * this node, so the graph's own edges decide what runs next — exactly as in the source.
 * `undefined` when no node wrote it (the input checkpoint); the first name when several nodes
 * ran in one step.
 */
export async function writerOf(
  checkpointer: BaseCheckpointSaver,
  config: RunnableConfig,
): Promise<string | undefined> {
  const tuple = await checkpointer.getTuple(config);
  if (!tuple) return undefined;
  const parent = tuple.parentConfig ? await checkpointer.getTuple(tuple.parentConfig) : undefined;
  const seen = tuple.checkpoint.versions_seen ?? {};
  const before = parent?.checkpoint.versions_seen ?? {};
  const writers = Object.keys(seen)
    .filter((node) => !NOT_NODES.has(node))
    .filter(
      (node) =>
        before[node] === undefined || canonicalJson(seen[node]) !== canonicalJson(before[node]),
    )
    .sort();
  return writers[0];
}
