import type { RunnableConfig } from '@langchain/core/runnables';
import type { BaseCheckpointSaver, ChannelVersions } from '@langchain/langgraph-checkpoint';
import { VeridexError } from '../errors/index.js';
import type { ThreadGraph } from './portable-run.js';

// Pending writes that carry no state: an interrupted or failed task, resume values.
const NO_STATE_WRITES = new Set(['__error__', '__interrupt__', '__resume__', '__scheduled__']);
const BRANCH = 'branch:to:';

/**
 * A read-only {@link ThreadGraph} over a checkpointer alone, for exporting a thread without
 * loading the application's graph (`veridex runs export` without `--graph`). It reads what a
 * `StateGraph` keeps in its latest checkpoint: the state channels, and the nodes whose
 * `branch:to:<node>` trigger carries a version the node has not yet seen (what runs next).
 *
 * It refuses what only the compiled graph can interpret — a step where some parallel tasks
 * finished and others wait, pending `Send` tasks, delta channels — with `config_invalid`
 * asking for the graph.
 *
 * @example const run = await exportThread(checkpointReader(PostgresCheckpointer.fromDatabase(db)), 'payout');
 */
export function checkpointReader(checkpointer: BaseCheckpointSaver): ThreadGraph {
  return {
    checkpointer,
    async getState(config: RunnableConfig) {
      const tuple = await checkpointer.getTuple(config);
      if (!tuple) return { values: {}, next: [], config };
      const needGraph = (why: string): never => {
        throw new VeridexError(
          'config_invalid',
          `Thread "${String(config.configurable?.thread_id)}" ${why}; only the compiled graph can read it: pass --graph (or export with the graph).`,
        );
      };
      if (tuple.pendingWrites?.some(([, channel]) => !NO_STATE_WRITES.has(String(channel)))) {
        needGraph('stopped in a step where some parallel tasks finished and others did not');
      }
      const { channel_values: channels, channel_versions, versions_seen } = tuple.checkpoint;
      if (Array.isArray(channels.__pregel_tasks) && channels.__pregel_tasks.length > 0) {
        needGraph('has pending Send tasks');
      }
      if (tuple.metadata && 'counters_since_delta_snapshot' in tuple.metadata) {
        needGraph('uses delta channels');
      }
      const values: Record<string, unknown> = {};
      for (const [name, value] of Object.entries(channels)) {
        if (!name.startsWith('__') && !name.includes(':')) values[name] = value;
      }
      return {
        values,
        next: nextNodes(channels, channel_versions, versions_seen),
        config: tuple.config,
      };
    },
    async updateState() {
      throw new VeridexError('config_invalid', 'A checkpoint reader is read-only.');
    },
  };
}

// A node runs next when its trigger channel holds a value (consumed triggers are emptied) of
// a version newer than the one the node last saw: LangGraph's own rule.
function nextNodes(
  channels: Record<string, unknown>,
  versions: ChannelVersions,
  seen: Record<string, ChannelVersions>,
): string[] {
  const next: string[] = [];
  for (const [channel, version] of Object.entries(versions)) {
    if (!(channel in channels)) continue;
    const node =
      channel === '__start__'
        ? '__start__'
        : channel.startsWith(BRANCH)
          ? channel.slice(BRANCH.length)
          : undefined;
    if (node === undefined) continue;
    if (isNewer(version, seen[node]?.[channel])) next.push(node);
  }
  return next.sort();
}

function isNewer(version: string | number, seen: string | number | undefined): boolean {
  if (seen === undefined) return true;
  if (typeof version === 'number' && typeof seen === 'number') return version > seen;
  return String(version) > String(seen);
}
