import type { BaseMessage } from '@langchain/core/messages';
import { PostgresCheckpointer } from '../checkpointer/index.js';
import { sanitizeOutput } from '../tools/index.js';
import type { InboxContext } from './inbox-context.js';

/** What the inbox shows of a run: where it stands, what waits, and the last messages (sanitised). */
export interface RunView {
  threadId: string;
  /** From the audit trail: `running`, `suspended`, `completed`, `failed`, or `unknown`. */
  status: 'running' | 'suspended' | 'completed' | 'failed' | 'unknown';
  pendingApprovals: string[];
  lastMessages: ConversationMessage[];
}

/** One message of a run as the inbox shows it: its role, sanitised text, and tools it called. */
export interface ConversationMessage {
  role: string;
  content: string;
  toolCalls?: Array<{ name: string }>;
}

const STATUS_OF: Record<string, RunView['status']> = {
  run_started: 'running',
  run_suspended: 'suspended',
  run_completed: 'completed',
  run_failed: 'failed',
};

/**
 * The run behind a thread: status from its audit trail, pending approvals, and the last
 * `limit` messages of its latest checkpoint, sanitised (see {@link lastMessages}).
 */
export async function runView(inbox: InboxContext, threadId: string, limit = 10): Promise<RunView> {
  const events = await inbox.audit.events(threadId);
  let status: RunView['status'] = 'unknown';
  for (const event of events) status = STATUS_OF[event.type] ?? status;
  const pending = await inbox.approvals.listPending({ threadId });
  await inbox.audit.scrubber.refresh();
  return {
    threadId,
    status,
    pendingApprovals: pending.map((request) => request.id),
    lastMessages: await lastMessages(inbox, threadId, limit),
  };
}

/**
 * The last `limit` messages of a thread's latest checkpoint, each passed through
 * `sanitizeOutput` (hidden Unicode, role tokens, secrets the scrubber knows): model text reaches
 * approvers as safely as it reaches models. Empty when the thread has no checkpoint here.
 * Call after `inbox.audit.scrubber.refresh()`, so secrets another process registered are known;
 * callers refresh once per request for everything they show.
 */
export async function lastMessages(
  inbox: InboxContext,
  threadId: string,
  limit = 10,
): Promise<ConversationMessage[]> {
  const tuple = await PostgresCheckpointer.fromDatabase(inbox.db)
    .getTuple({ configurable: { thread_id: threadId } })
    .catch(() => undefined);
  const messages = (tuple?.checkpoint.channel_values.messages ?? []) as BaseMessage[];
  return (Array.isArray(messages) ? messages : []).slice(-limit).map((message) => {
    const toolCalls = (message as { tool_calls?: Array<{ name: string }> }).tool_calls;
    return {
      role: typeof message.getType === 'function' ? message.getType() : 'unknown',
      content: sanitizeOutput(message.content, {
        scrubber: inbox.audit.scrubber,
        maxBytes: 4000,
      }).content,
      ...(toolCalls?.length ? { toolCalls: toolCalls.map((call) => ({ name: call.name })) } : {}),
    };
  });
}
