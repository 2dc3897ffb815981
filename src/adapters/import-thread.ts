import type { RunnableConfig } from '@langchain/core/runnables';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { type AuditLog, deriveEventId } from '../audit/index.js';
import { VeridexError } from '../errors/index.js';
import type { UnsanitisableParts } from './carried-content.js';
import {
  type CheckedApproval,
  checkApproval,
  type ImportedApproval,
  rederiveApproval,
} from './import-approvals.js';
import { appendPortableAudit, checkPortableAudit } from './import-audit.js';
import { fromPortableMessage, type PortableMessage } from './portable-message.js';
import type { PortableRun, ThreadGraph } from './portable-run.js';
import { type RunGovernance, runGovernanceOf } from './run-governance.js';
import { parsePortableRun } from './run-schema.js';
import {
  type CarriedMessageFindings,
  sanitizeCarriedMessages,
} from './sanitize-carried-message.js';

/** Options for {@link importThread}. */
export interface ImportThreadOptions extends RunGovernance {
  /** Thread to create (default: the run's own id; another id needs `audit: false`). */
  threadId?: string;
  messagesKey?: string;
  /** State key of the working memory (default `workingMemory`). */
  workingMemoryKey?: string;
  /** `false`: leave the audit chain out (it is bound to the source thread id). */
  importAudit?: boolean;
  /**
   * Replay the approval decisions recorded in the file (default false: approvers decide again
   * after the move). Only for files from a source you trust: the file can claim any approver.
   */
  trustRecordedDecisions?: boolean;
  /**
   * A message content part the output sanitiser cannot read (an image, audio, a base64 or URL
   * document, encrypted reasoning, an unknown type): `'refuse'` the import with
   * `import_invalid` (default), or `'drop'` the part, leaving a visible notice in its place.
   */
  unsanitisableParts?: UnsanitisableParts;
}

/** What {@link importThread} did. */
export interface ImportThreadResult {
  threadId: string;
  config: RunnableConfig;
  /** Events appended to the target's audit chain (0 when there was no chain or no log). */
  auditEvents: number;
  approvals: ImportedApproval[];
  /** Carried messages the sanitiser changed (also a `security_event` when there is a log). */
  sanitisedMessages: CarriedMessageFindings[];
}

/**
 * Imports a `veridex.run/v1` document (untrusted) as a new thread of `graph`, ready to resume:
 *
 * 1. the document is checked against the shipped JSON Schema, its audit chain re-hashed, and
 *    each pending approval checked against the target's tools — before anything is written;
 * 2. the target thread must be empty (no checkpoint, events or approvals), else
 *    `import_conflict`;
 * 3. the state is written as `pending.resumeAs` — every carried message, whatever its role and
 *    content shape, passes the output sanitiser first (`sanitizeCarriedMessages`: role tokens,
 *    hidden characters and credentials neutralised; a part it cannot read refused) — and the
 *    graph must then wait on exactly `pending.next` (else the checkpoint is deleted and
 *    `import_invalid` says so);
 * 4. the audit chain is appended as it was, so it continues from the source's head, followed
 *    by a `security_event` (`imported_messages_sanitised`) if the sanitiser changed anything;
 * 5. pending approvals are re-derived through the target's own policy and `ApprovalManager`
 *    (see `rederiveApproval`): a file cannot weaken a route, a quorum or an approver list.
 *
 * Governance (audit log, approvals, policy, tools) comes from the options or the graph's
 * governed tool node. Resume the thread as any suspended thread (`resumeThread`,
 * `Command({ resume })`): the waiting node re-runs and finds its requests.
 *
 * @throws VeridexError `import_invalid`, `audit_chain_broken`, `import_conflict`, `config_invalid`.
 * @example await importThread(graph, JSON.parse(readFileSync('run.json', 'utf8')));
 */
export async function importThread(
  graph: ThreadGraph,
  document: unknown,
  options: ImportThreadOptions = {},
): Promise<ImportThreadResult> {
  const run = parsePortableRun(document);
  const threadId = options.threadId ?? run.threadId;
  const withAudit = run.audit !== undefined && options.importAudit !== false;
  if (withAudit) {
    if (threadId !== run.threadId) {
      throw new VeridexError(
        'config_invalid',
        `The run's audit chain is bound to thread "${run.threadId}"; import it under that id, or leave the chain out (importAudit: false).`,
      );
    }
    checkPortableAudit(run.audit!, run.threadId);
  }
  const governance = runGovernanceOf(graph.nodes, options, run.pending.next);
  const checked = checkApprovals(run, threadId, governance);
  // The file's messages are as untrusted as a tool's output (README "Portable runs").
  const carried = sanitizeCarriedMessages(run.messages, {
    scrubber: governance.audit?.scrubber,
    unsanitisableParts: options.unsanitisableParts ?? 'refuse',
  });
  const config = { configurable: { thread_id: threadId } };
  await assertEmpty(graph, threadId, governance);

  const audit = withAudit ? governance.audit : undefined;
  const written = await writeState(graph, run, carried.messages, config, options);
  try {
    if (audit) await appendPortableAudit(audit, run.audit!);
    if (governance.audit) await recordSanitised(governance.audit, threadId, carried.findings);
  } catch (error) {
    await deleteCheckpoints(graph, threadId);
    throw error;
  }
  // From here on the thread is resumable even if a step fails: the waiting node re-derives
  // any approval request that is missing when it re-runs.
  const approvals: ImportedApproval[] = [];
  for (const approval of checked) {
    approvals.push(
      await rederiveApproval(approval, {
        approvals: governance.approvals!,
        policy: governance.policy!,
        ...(governance.audit ? { audit: governance.audit } : {}),
        ...(options.trustRecordedDecisions ? { trustRecordedDecisions: true } : {}),
      }),
    );
  }
  return {
    threadId,
    config: written,
    auditEvents: audit ? run.audit!.events.length : 0,
    approvals,
    sanitisedMessages: carried.findings,
  };
}

// Kinds, counts and positions only: never the text that was removed.
async function recordSanitised(
  audit: AuditLog,
  threadId: string,
  findings: CarriedMessageFindings[],
): Promise<void> {
  if (findings.length === 0) return;
  await audit.append({
    threadId,
    eventId: deriveEventId(threadId, 'security_event', 'imported_messages_sanitised'),
    type: 'security_event',
    payload: { kind: 'imported_messages_sanitised', messages: findings },
  });
}

function checkApprovals(
  run: PortableRun,
  threadId: string,
  governance: RunGovernance,
): CheckedApproval[] {
  if (run.pending.approvals.length === 0) return [];
  if (!governance.approvals || !governance.policy || !governance.registry) {
    throw new VeridexError(
      'config_invalid',
      `The run waits for ${run.pending.approvals.length} approval(s), but the graph has no governed tool node to re-derive them; pass approvals, policy and registry.`,
    );
  }
  return run.pending.approvals.map((request) =>
    checkApproval(request, threadId, governance.registry!, governance.agentId),
  );
}

async function assertEmpty(
  graph: ThreadGraph,
  threadId: string,
  governance: RunGovernance,
): Promise<void> {
  const conflict = (what: string): never => {
    throw new VeridexError(
      'import_conflict',
      `Thread "${threadId}" already has ${what} in the target; import into a fresh thread id or delete the thread first.`,
      { details: { threadId } },
    );
  };
  const snapshot = await graph.getState({ configurable: { thread_id: threadId } });
  if (snapshot.config.configurable?.checkpoint_id !== undefined) conflict('checkpoints');
  if (governance.audit && (await governance.audit.events(threadId)).length > 0) {
    conflict('audit events');
  }
  if (governance.approvals && (await governance.approvals.listByThread(threadId)).length > 0) {
    conflict('approval requests');
  }
}

async function writeState(
  graph: ThreadGraph,
  run: PortableRun,
  carried: readonly PortableMessage[],
  config: RunnableConfig,
  options: ImportThreadOptions,
): Promise<RunnableConfig> {
  const values: Record<string, unknown> = {
    ...run.state,
    [options.messagesKey ?? 'messages']: carried.map(fromPortableMessage),
  };
  if (run.memory.working.length > 0)
    values[options.workingMemoryKey ?? 'workingMemory'] = run.memory.working;
  let written: RunnableConfig;
  try {
    written = await graph.updateState(config, values, run.pending.resumeAs);
  } catch (error) {
    throw new VeridexError(
      'import_invalid',
      `The target graph refused the run's state (${(error as Error).message}); is it the graph the run was exported from?`,
      { cause: error },
    );
  }
  const next = [...(await graph.getState(config)).next].sort();
  const expected = [...run.pending.next].sort();
  if (next.join('\n') !== expected.join('\n')) {
    await deleteCheckpoints(graph, String(config.configurable?.thread_id));
    throw new VeridexError(
      'import_invalid',
      `After import the graph would run [${next.join(', ')}] next, but the run waits on [${expected.join(', ')}]: the target graph's nodes or edges differ from the source's. Nothing was kept.`,
    );
  }
  return written;
}

// Undoes a state write the import cannot stand behind (the thread was empty before it).
async function deleteCheckpoints(graph: ThreadGraph, threadId: string): Promise<void> {
  if (typeof graph.checkpointer === 'object') {
    await (graph.checkpointer as BaseCheckpointSaver).deleteThread(threadId);
  }
}
