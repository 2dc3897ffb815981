import { type BaseMessage, isBaseMessage } from '@langchain/core/messages';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import type { ApprovalRequest } from '../approvals/index.js';
import { GENESIS_HASH, type TraceEvent } from '../audit/index.js';
import { VeridexError } from '../errors/index.js';
import { toPortableMessage } from './portable-message.js';
import {
  PORTABLE_RUN_FORMAT,
  type PortableApproval,
  type PortableMemoryDelta,
  type PortableRun,
  type ThreadGraph,
} from './portable-run.js';
import { type RunGovernance, runGovernanceOf } from './run-governance.js';
import { writerOf } from './thread-writer.js';

/** Options for {@link exportThread}. */
export interface ExportThreadOptions extends Pick<RunGovernance, 'approvals'> {
  /** State key holding the conversation (default `messages`). */
  messagesKey?: string;
  /** State key of the working memory (default `workingMemory`); it goes to `memory.working`. */
  workingMemoryKey?: string;
  /**
   * The thread's audit chain (default: the graph's governed tool node's log). `false` leaves
   * the chain out; the memory delta then lists no long-term writes.
   */
  audit?: RunGovernance['audit'] | false;
  /** A signed tree head covering the chain, copied to `audit.treeHead`. */
  treeHead?: Record<string, unknown>;
}

/**
 * Exports a thread's latest checkpoint as a `veridex.run/v1` document: messages, other state,
 * the nodes that run next and the node that wrote the state, pending approval requests, the
 * memory delta and the audit chain. Approvals and audit come from the options or, by default,
 * from the graph's governed tool node. Read-only: nothing is written anywhere.
 * Serialise it with `canonicalJson` for a byte-stable file.
 *
 * @throws VeridexError `run_not_found` for a thread without checkpoints; `import_invalid` if a
 *   state value has no JSON form (the message names the key).
 * @example writeFileSync('run.json', canonicalJson(await exportThread(graph, 'payout-42')));
 */
export async function exportThread(
  graph: ThreadGraph,
  threadId: string,
  options: ExportThreadOptions = {},
): Promise<PortableRun> {
  const messagesKey = options.messagesKey ?? 'messages';
  const workingKey = options.workingMemoryKey ?? 'workingMemory';
  const snapshot = await graph.getState({ configurable: { thread_id: threadId } });
  if (snapshot.config.configurable?.checkpoint_id === undefined) {
    throw new VeridexError(
      'run_not_found',
      `Thread "${threadId}" has no checkpoint to export; check the thread id and the database.`,
    );
  }
  // A node suspended again after a resume (1 of 2 approvals given) is reported by LangGraph as
  // a task with an interrupt while `next` is empty: it is still what the run waits on.
  const waitingOn =
    snapshot.next.length > 0
      ? [...snapshot.next]
      : [
          ...new Set(
            (snapshot.tasks ?? [])
              .filter((task) => (task.interrupts ?? []).length > 0)
              .map((task) => task.name),
          ),
        ];
  const governance = runGovernanceOf(
    graph.nodes,
    { ...(options.approvals ? { approvals: options.approvals } : {}) },
    waitingOn,
  );
  const audit = options.audit === false ? undefined : (options.audit ?? governance.audit);
  const values = (snapshot.values ?? {}) as Record<string, unknown>;
  const state: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) {
    if (key === messagesKey || key === workingKey) continue;
    state[key] = toJsonValue(key, value);
  }
  const working = values[workingKey];
  const events = audit ? jsonOf(await audit.events(threadId)) : undefined;
  const checkpointer =
    typeof graph.checkpointer === 'object'
      ? (graph.checkpointer as BaseCheckpointSaver)
      : undefined;
  const resumeAs = checkpointer ? await writerOf(checkpointer, snapshot.config) : undefined;
  const approvals = governance.approvals
    ? pendingOf(await governance.approvals.listByThread(threadId))
    : [];
  return {
    format: PORTABLE_RUN_FORMAT,
    threadId,
    messages: ((values[messagesKey] ?? []) as BaseMessage[]).map(toPortableMessage),
    state,
    pending: { next: waitingOn.sort(), ...(resumeAs ? { resumeAs } : {}), approvals },
    memory: {
      working: Array.isArray(working) ? (toJsonValue(workingKey, working) as unknown[]) : [],
      ...memoryWrites(events ?? []),
    },
    ...(events
      ? {
          audit: {
            eventCount: events.length,
            headHash: events.at(-1)?.hash ?? GENESIS_HASH,
            events,
            ...(options.treeHead ? { treeHead: jsonOf(options.treeHead) } : {}),
          },
        }
      : {}),
  };
}

function pendingOf(requests: readonly ApprovalRequest[]): PortableApproval[] {
  return jsonOf(
    requests
      .filter((request) => request.status === 'pending')
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id))
      .map(({ createdAt: _createdAt, ...request }) => request as PortableApproval),
  );
}

function memoryWrites(events: readonly TraceEvent[]): Omit<PortableMemoryDelta, 'working'> {
  const pick = (payload: Record<string, unknown>, keys: readonly string[]) =>
    Object.fromEntries(
      keys.filter((key) => payload[key] !== undefined).map((key) => [key, payload[key]]),
    );
  return {
    written: events
      .filter((event) => event.type === 'memory_written')
      .map((event) =>
        pick(event.payload, [
          'recordId',
          'writeId',
          'tier',
          'namespace',
          'key',
          'version',
          'contentHash',
          'status',
        ]),
      ) as unknown as PortableMemoryDelta['written'],
    invalidated: events
      .filter((event) => event.type === 'memory_invalidated')
      .map((event) =>
        pick(event.payload, ['recordId', 'key', 'version', 'reason']),
      ) as unknown as PortableMemoryDelta['invalidated'],
  };
}

// Plain JSON: drops undefined fields so the canonical form is the same on every export.
function jsonOf<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function toJsonValue(key: string, value: unknown): unknown {
  if (Array.isArray(value) && value.length > 0 && value.every((item) => isBaseMessage(item))) {
    return value.map((item) => toPortableMessage(item as BaseMessage));
  }
  try {
    return value === undefined ? null : jsonOf(value);
  } catch (error) {
    throw new VeridexError(
      'import_invalid',
      `State key "${key}" has no JSON form (${(error as Error).message}); store JSON-safe values to export the thread.`,
      { cause: error },
    );
  }
}
