import { type BaseMessage, isHumanMessage } from '@langchain/core/messages';
import { Annotation, type LangGraphRunnableConfig } from '@langchain/langgraph';
import { heuristicExtractor } from '../memory/heuristic-extractor.js';
import { type MemoryExtractor, messageText } from '../memory/memory-extractor.js';
import type { MemoryManager } from '../memory/memory-manager.js';
import type {
  LinkType,
  MemoryWriteContext,
  MemoryWriteOutcome,
  StoredTier,
} from '../memory/types.js';
import {
  RESET_WORKING_MEMORY,
  type WorkingMemoryItem,
  type WorkingMemoryUpdate,
  workingMemoryReducer,
} from '../memory/working-memory.js';

/** A recalled memory in graph state; `{ id, content, score }` is what the context compiler packs. */
export interface RetrievedMemory {
  id: string;
  content: string;
  score: number;
  tier: StoredTier;
  confidence: number;
  source: string;
  via?: { from: string; type: LinkType };
}

/** What the evolve node did with one candidate write. */
export interface MemoryWriteSummary {
  status: MemoryWriteOutcome['status'];
  content: string;
  recordId?: string;
  ruleId?: string;
  reason?: string;
}

/**
 * The state the memory nodes read and write. Spread it into your own annotation:
 * `Annotation.Root({ ...MessagesAnnotation.spec, ...MemoryAnnotation.spec })`.
 * - `memories`, `procedural`: written by `retrieve` for the context compiler;
 * - `workingMemory`: the run's scratchpad (append items; `promote: true` keeps one);
 * - `memoryWrites`, `memoryCursor`: written by `evolve`.
 */
export const MemoryAnnotation = Annotation.Root({
  memories: Annotation<RetrievedMemory[]>({ reducer: (_, next) => next, default: () => [] }),
  procedural: Annotation<string[]>({ reducer: (_, next) => next, default: () => [] }),
  workingMemory: Annotation<WorkingMemoryItem[], WorkingMemoryUpdate>({
    reducer: workingMemoryReducer,
    default: () => [],
  }),
  memoryWrites: Annotation<MemoryWriteSummary[]>({ reducer: (_, next) => next, default: () => [] }),
  /** Number of messages already distilled by `evolve` (where the next run starts). */
  memoryCursor: Annotation<number>({ reducer: (_, next) => next, default: () => 0 }),
});

/** The state shape the nodes need (plus `messages`). */
export type MemoryNodesState = typeof MemoryAnnotation.State & { messages: BaseMessage[] };

/** Options for {@link memoryNodes}. */
export interface MemoryNodesOptions {
  /** Namespace per call, e.g. `(config) => ['users', config.configurable?.user_id]`. Default: the manager's. */
  namespace?: readonly string[] | ((config: LangGraphRunnableConfig) => readonly string[]);
  /** Memories recalled. Default 8. */
  limit?: number;
  /** Tiers recalled. Default: episodic and semantic (procedures go to `procedural`). */
  tiers?: readonly StoredTier[];
  /** Turns a run into an episode and candidate facts. Default {@link heuristicExtractor}. */
  extractor?: MemoryExtractor;
  /** Write an episodic record for each run. Default true. */
  episodes?: boolean;
}

/**
 * The two LangGraph nodes of four-tier memory:
 * - `retrieve` (before the model): recalls memories for the latest user message and the
 *   current procedures, into `memories` and `procedural` for the context compiler;
 * - `evolve` (at the end of a run): distils the run's messages and working memory into an
 *   episodic record and candidate facts with the extractor — each write a `memory_write`
 *   proposal the policy decides — then clears working memory.
 * Writes are keyed by thread, turn and content, so a node that re-runs writes nothing twice.
 *
 * @example
 * const { retrieve, evolve } = memoryNodes(memory);
 * new StateGraph(State).addNode('retrieve', retrieve).addNode('agent', callModel).addNode('evolve', evolve)
 *   .addEdge(START, 'retrieve').addEdge('retrieve', 'agent').addEdge('agent', 'evolve').addEdge('evolve', END);
 */
export function memoryNodes(manager: MemoryManager, options: MemoryNodesOptions = {}) {
  const extractor = options.extractor ?? heuristicExtractor();
  const namespaceOf = (config: LangGraphRunnableConfig) =>
    typeof options.namespace === 'function'
      ? options.namespace(config)
      : (options.namespace ?? manager.namespace);

  async function retrieve(
    state: MemoryNodesState,
    config: LangGraphRunnableConfig = {},
  ): Promise<{ memories: RetrievedMemory[]; procedural: string[] }> {
    const namespace = namespaceOf(config);
    const latest = [...(state.messages ?? [])].reverse().find((message) => isHumanMessage(message));
    const query = latest ? messageText(latest).trim() : '';
    const hits = query
      ? await manager.recall(query, {
          namespace,
          limit: options.limit ?? 8,
          tiers: options.tiers ?? ['episodic', 'semantic'],
        })
      : [];
    return {
      memories: hits.map((hit) => ({
        id: hit.record.id,
        content: hit.record.content,
        score: hit.score,
        tier: hit.record.tier,
        confidence: hit.record.confidence,
        source: hit.record.provenance.source,
        ...(hit.via ? { via: hit.via } : {}),
      })),
      procedural: await manager.proceduralFor(namespace),
    };
  }

  async function evolve(
    state: MemoryNodesState,
    config: LangGraphRunnableConfig = {},
  ): Promise<{
    workingMemory: WorkingMemoryUpdate;
    memoryWrites: MemoryWriteSummary[];
    memoryCursor: number;
  }> {
    const messages = state.messages ?? [];
    const runMessages = messages.slice(state.memoryCursor ?? 0);
    const threadId = String(config.configurable?.thread_id ?? 'default');
    const turn = messages.filter((message) => isHumanMessage(message)).length;
    // The whole conversation goes along: every write's source is derived from it, so an
    // extractor cannot record an answer that repeats injected tool output as the user's.
    const context: MemoryWriteContext = {
      threadId,
      runId: `${threadId}:${turn}`,
      turn,
      conversation: messages,
    };
    const namespace = namespaceOf(config);
    const extraction = await extractor({
      messages: runMessages,
      workingMemory: state.workingMemory ?? [],
      threadId,
    });
    const summaries: MemoryWriteSummary[] = [];
    const derivedFrom: string[] = [];
    if (extraction.episode && (options.episodes ?? true)) {
      const outcome = await manager.propose(
        {
          tier: 'episodic',
          namespace,
          content: extraction.episode.summary,
          value: { participants: [...extraction.episode.participants], turn },
          tags: ['episode'],
          source: 'model',
          confidence: 0.9,
        },
        context,
      );
      summaries.push(summarize(outcome, extraction.episode.summary));
      if (outcome.status === 'written') derivedFrom.push(outcome.record.id);
    }
    if (extraction.facts.length > 0) {
      const outcomes = await manager.proposeMany(
        extraction.facts.map((fact) => ({
          ...fact,
          namespace: fact.namespace ?? namespace,
          derivedFrom: [...(fact.derivedFrom ?? []), ...derivedFrom],
        })),
        context,
      );
      outcomes.forEach((outcome, index) => {
        summaries.push(summarize(outcome, extraction.facts[index]!.content));
      });
    }
    return {
      workingMemory: RESET_WORKING_MEMORY,
      memoryWrites: summaries,
      memoryCursor: messages.length,
    };
  }

  return { retrieve, evolve };
}

function summarize(outcome: MemoryWriteOutcome, content: string): MemoryWriteSummary {
  if (outcome.status === 'denied') {
    return { status: outcome.status, content, ruleId: outcome.ruleId, reason: outcome.reason };
  }
  if (outcome.status === 'escalated') {
    return { status: outcome.status, content, ruleId: outcome.decision.ruleId };
  }
  return { status: outcome.status, content, recordId: outcome.record.id };
}
