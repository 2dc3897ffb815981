import { type BaseMessage, isBaseMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import { z } from 'zod';
import type { AuditLog, TraceEvent } from '../audit/index.js';
import { VeridexError } from '../errors/index.js';
import {
  fromPortableMessage,
  type PortableMessage,
  toPortableMessage,
} from './portable-message.js';

/** Format tag of a portable run. */
export const PORTABLE_RUN_FORMAT = 'veridex.run/v1';

/**
 * A LangGraph thread in a runtime-neutral form (`veridex.run/v1`): its messages, its other
 * JSON state, what it is waiting for, and optionally its audit chain. Produced by
 * {@link exportThread}, consumed by {@link importThread} or a later standalone runtime.
 */
export interface PortableRun {
  format: typeof PORTABLE_RUN_FORMAT;
  threadId: string;
  exportedAt: string;
  checkpoint: { id?: string; createdAt?: string; step?: number };
  messages: PortableMessage[];
  /** Channel values other than the messages, as JSON. */
  state: Record<string, unknown>;
  pending: { next: string[]; interrupts: Array<{ id?: string; value: unknown }> };
  audit?: { events: TraceEvent[] };
}

/** The parts of a compiled LangGraph graph the converters use. */
export interface ThreadGraph {
  getState(config: RunnableConfig): Promise<{
    values: unknown;
    next: readonly string[];
    config: RunnableConfig;
    createdAt?: string;
    metadata?: { step?: number };
    tasks: ReadonlyArray<{ interrupts?: ReadonlyArray<{ id?: string; value?: unknown }> }>;
  }>;
  updateState(
    config: RunnableConfig,
    values: Record<string, unknown>,
    asNode?: string,
  ): Promise<RunnableConfig>;
}

/** Options for {@link exportThread}. */
export interface ExportThreadOptions {
  /** State key holding the conversation (default `messages`). */
  messagesKey?: string;
  /** Include the thread's audit chain. */
  audit?: AuditLog;
}

/**
 * Exports a thread's latest checkpoint as a {@link PortableRun}.
 * @throws VeridexError `import_invalid` if a state value has no JSON form (name the key to fix).
 * @example const run = await exportThread(graph, 'thread-1', { audit }); writeFileSync('run.json', JSON.stringify(run));
 */
export async function exportThread(
  graph: ThreadGraph,
  threadId: string,
  options: ExportThreadOptions = {},
): Promise<PortableRun> {
  const messagesKey = options.messagesKey ?? 'messages';
  const snapshot = await graph.getState({ configurable: { thread_id: threadId } });
  const values = (snapshot.values ?? {}) as Record<string, unknown>;
  const state: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) {
    if (key === messagesKey) continue;
    state[key] = toJsonValue(key, value);
  }
  const messages = ((values[messagesKey] ?? []) as BaseMessage[]).map(toPortableMessage);
  return {
    format: PORTABLE_RUN_FORMAT,
    threadId,
    exportedAt: new Date().toISOString(),
    checkpoint: {
      ...(snapshot.config.configurable?.checkpoint_id
        ? { id: String(snapshot.config.configurable.checkpoint_id) }
        : {}),
      ...(snapshot.createdAt ? { createdAt: snapshot.createdAt } : {}),
      ...(snapshot.metadata?.step !== undefined ? { step: snapshot.metadata.step } : {}),
    },
    messages,
    state,
    pending: {
      next: [...snapshot.next],
      interrupts: snapshot.tasks.flatMap((task) =>
        (task.interrupts ?? []).map((pending) => ({
          ...(pending.id ? { id: pending.id } : {}),
          value: toJsonValue('interrupt', pending.value),
        })),
      ),
    },
    ...(options.audit ? { audit: { events: await options.audit.events(threadId) } } : {}),
  };
}

function toJsonValue(key: string, value: unknown): unknown {
  if (Array.isArray(value) && value.length > 0 && value.every((item) => isBaseMessage(item))) {
    return value.map((item) => toPortableMessage(item as BaseMessage));
  }
  try {
    return value === undefined ? null : JSON.parse(JSON.stringify(value));
  } catch (error) {
    throw new VeridexError(
      'import_invalid',
      `State key "${key}" has no JSON form (${(error as Error).message}); store JSON-safe values to export the thread.`,
      {
        cause: error,
      },
    );
  }
}

const portableMessageSchema = z.union([
  z.object({
    role: z.literal('system'),
    id: z.string().optional(),
    content: z.union([z.string(), z.array(z.record(z.string(), z.unknown()))]),
  }),
  z.object({
    role: z.literal('user'),
    id: z.string().optional(),
    name: z.string().optional(),
    content: z.union([z.string(), z.array(z.record(z.string(), z.unknown()))]),
  }),
  z.object({
    role: z.literal('assistant'),
    id: z.string().optional(),
    name: z.string().optional(),
    content: z.union([z.string(), z.array(z.record(z.string(), z.unknown()))]),
    toolCalls: z
      .array(
        z.object({
          id: z.string(),
          name: z.string(),
          arguments: z.record(z.string(), z.unknown()),
        }),
      )
      .optional(),
  }),
  z.object({
    role: z.literal('tool'),
    id: z.string().optional(),
    toolCallId: z.string(),
    name: z.string().optional(),
    content: z.union([z.string(), z.array(z.record(z.string(), z.unknown()))]),
    status: z.enum(['success', 'error']).optional(),
  }),
]);

const portableRunSchema = z.object({
  format: z.literal(PORTABLE_RUN_FORMAT),
  threadId: z.string().min(1),
  messages: z.array(portableMessageSchema),
  state: z.record(z.string(), z.unknown()),
});

/** Options for {@link importThread}. */
export interface ImportThreadOptions {
  /** Thread to create (default: the run's own thread id). */
  threadId?: string;
  messagesKey?: string;
  /** The node the imported state is written "as" (decides what runs next); see LangGraph's `updateState`. */
  asNode?: string;
}

/**
 * Writes a portable run into a graph as a new checkpoint of a thread: messages (as LangChain
 * messages) and state values. Pending interrupts are not copied: resuming the thread re-runs
 * the waiting node, which raises them again. The input is untrusted and validated first.
 *
 * @throws VeridexError `import_invalid` with the validation issues.
 */
export async function importThread(
  graph: ThreadGraph,
  run: unknown,
  options: ImportThreadOptions = {},
): Promise<{ threadId: string; config: RunnableConfig }> {
  const parsed = portableRunSchema.safeParse(run);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 5)
      .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
    throw new VeridexError(
      'import_invalid',
      `Not a valid ${PORTABLE_RUN_FORMAT} document: ${issues.join('; ')}.`,
    );
  }
  const threadId = options.threadId ?? parsed.data.threadId;
  const messagesKey = options.messagesKey ?? 'messages';
  const values: Record<string, unknown> = {
    ...parsed.data.state,
    [messagesKey]: parsed.data.messages.map((message) =>
      fromPortableMessage(message as PortableMessage),
    ),
  };
  const config = await graph.updateState(
    { configurable: { thread_id: threadId } },
    values,
    options.asNode,
  );
  return { threadId, config };
}
