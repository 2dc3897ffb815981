import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LangGraphRunnableConfig } from '@langchain/langgraph';
import {
  type AuditLog,
  deriveEventId,
  type EvidenceBundle,
  type EvidenceSigner,
  type SignedTreeHead,
  sealAuditThread,
  storeEvidence,
} from '../audit/index.js';
import type { Database } from '../db/index.js';
import { VeridexError } from '../errors/index.js';
import { evidenceFileName } from './evidence-file-name.js';

/** Options for {@link evidenceNode} and {@link sealThreadEvidence}. */
export interface EvidenceNodeOptions {
  audit: AuditLog;
  /** Who signs (the agent's key, plus counter-signers). */
  signers: readonly EvidenceSigner[];
  /** Write each bundle to `<dir>/<evidenceFileName(threadId)>` (created if missing). */
  outDir?: string;
  /**
   * Keep each bundle in this database too (`veridex_evidence`, migration 0020), where the
   * approvals service serves it (`GET /api/threads/{id}/evidence`).
   */
  db?: Database;
  /** Signed alongside the events, e.g. `{ appId, agentId }`. */
  subject?: Record<string, unknown>;
  /** Also append a `run_completed` event before sealing (default true). */
  completeRun?: boolean;
  /** Receives what the node sealed (the prebuilt agent returns it from `run` without sealing again). */
  onSealed?: (threadId: string, sealed: SealedEvidence) => void;
}

/** What {@link sealThreadEvidence} produced. */
export interface SealedEvidence {
  bundle: EvidenceBundle;
  /** The bundle's signed tree head (recorded in `audit.heads`, published to `audit.witnesses`). */
  treeHead: SignedTreeHead;
  /** File the bundle was written to, when `outDir` was given. */
  path?: string;
  events: number;
}

/**
 * Seals a thread's audit chain into a signed evidence bundle (and writes it to `outDir`), linked
 * to the thread's previous signed head so that successive bundles verify as one history (see
 * `sealAuditThread`). With `completeRun`, a `run_completed` event (id derived from the chain so
 * far) is appended first.
 * @throws VeridexError `audit_log_inconsistent` when the thread no longer extends a signed head.
 */
export async function sealThreadEvidence(
  threadId: string,
  options: EvidenceNodeOptions,
  run: { runId?: string; output?: string } = {},
): Promise<SealedEvidence> {
  const last = (await options.audit.events(threadId)).at(-1);
  // A chain that already ends in run_completed was sealed by an earlier (re-)run of this node.
  if ((options.completeRun ?? true) && last?.type !== 'run_completed') {
    await options.audit.append({
      threadId,
      runId: run.runId ?? threadId,
      eventId: deriveEventId(threadId, 'run_completed', last?.hash ?? 'genesis'),
      type: 'run_completed',
      payload: run.output === undefined ? {} : { output: run.output },
    });
  }
  const { bundle, treeHead, events } = await sealAuditThread(
    options.audit,
    { threadId, ...(options.subject ? { subject: options.subject } : {}) },
    options.signers,
  );
  if (options.db) await storeEvidence(options.db, threadId, run.runId ?? threadId, bundle);
  if (!options.outDir) return { bundle, treeHead, events: events.length };
  mkdirSync(options.outDir, { recursive: true });
  const path = join(options.outDir, evidenceFileName(threadId));
  writeFileSync(path, `${JSON.stringify(bundle, null, 2)}\n`);
  return { bundle, treeHead, path, events: events.length };
}

/**
 * A LangGraph node for the end of a run: appends `run_completed` and seals the thread's events
 * into a signed evidence bundle anyone can verify offline (`veridex verify`). Place it before
 * `END`. It changes no state (so it fits any state schema).
 *
 * @example
 * graph.addNode('evidence', evidenceNode({ audit, signers: [signer], outDir: './.veridex/evidence' }))
 *      .addEdge('evidence', END);
 */
export function evidenceNode(options: EvidenceNodeOptions) {
  return async function evidence(
    _state: unknown,
    config: LangGraphRunnableConfig,
  ): Promise<Record<string, never>> {
    const threadId = config.configurable?.thread_id;
    if (typeof threadId !== 'string' || threadId === '') {
      throw new VeridexError(
        'config_invalid',
        'evidenceNode needs configurable.thread_id: run the graph with a checkpointer and a thread id.',
      );
    }
    const sealed = await sealThreadEvidence(threadId, options, {
      runId: runIdOf(config, threadId),
    });
    options.onSealed?.(threadId, sealed);
    return {};
  };
}

/** The run id our nodes use: `configurable.run_id` when the caller sets one, else the thread id. */
export function runIdOf(config: LangGraphRunnableConfig | undefined, threadId: string): string {
  const runId = config?.configurable?.run_id;
  return typeof runId === 'string' && runId !== '' ? runId : threadId;
}
