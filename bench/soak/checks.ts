// The end checks of a soak run, from the database and the payment rail alone: what was
// approved ran exactly once, nothing else ran, no decision was lost, every thread is finished,
// failed with a typed code, or resumable, and every chain, checkpoint and bundle verifies.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ed25519Verifier, verifyChain, verifyEvidence } from '../../src/audit/index.js';
import { isThreadFinished } from '../../src/nodes/index.js';
import { idempotencyKeyFor } from '../../src/tools/index.js';
import type { SoakStack } from './graph.js';

/** What the checks found; every count but the totals must be zero. */
export interface CheckReport {
  threads: number;
  byState: Record<string, number>;
  failedCodes: Record<string, number>;
  approvals: number;
  approvalsByStatus: Record<string, number>;
  executed: number;
  /** Idempotency keys the rail executed more than once. */
  double: number;
  /** Approved transfers of finished threads that never executed. */
  lost: number;
  /** Approved transfers whose thread is still resumable (not lost, not yet run). */
  approvedPending: number;
  rejectedExecuted: number;
  expiredExecuted: number;
  /** Rail executions with no approved request behind them. */
  unapprovedExecuted: number;
  /** Approvals recorded `approved` after their deadline (database clock). */
  approvedAfterDeadline: number;
  /** Approvals recorded `expired` before their deadline (database clock). */
  expiredEarly: number;
  /** Decisions an approver saw succeed that are missing from the request. */
  decisionsLost: number;
  /** Threads failed without a typed code, or in a state they cannot leave. */
  stuck: number;
  untyped: number;
  chainsChecked: number;
  chainsBroken: number;
  checkpointsChecked: number;
  checkpointsBroken: number;
  evidenceChecked: number;
  evidenceInvalid: number;
  evidenceMissing: number;
  /** Approval → execution, ms (witness time of approval → rail time of execution). */
  approvalToExecution: number[];
  problems: string[];
}

interface ThreadRow {
  id: string;
  fate: string;
  state: string;
  error_code: string | null;
}

interface ApprovalRow {
  id: string;
  thread_id: string;
  subject_id: string;
  rule_id: string;
  status: string;
  decisions: Array<{ decisionId: string; decision: string }>;
}

const bump = (bucket: Record<string, number>, key: string) => {
  bucket[key] = (bucket[key] ?? 0) + 1;
};

/** Runs every check against the run's schema; `stack` is a fresh stack over it. */
export async function runChecks(
  stack: SoakStack,
  evidence: { dir: string; publicKey: Uint8Array },
): Promise<CheckReport> {
  const { db } = stack;
  const problems: string[] = [];
  const problem = (text: string) => {
    if (problems.length < 40) problems.push(text);
  };
  const threads = (
    await db.query<ThreadRow>('SELECT id, fate, state, error_code FROM soak_threads')
  ).rows;
  const approvals = (
    await db.query<ApprovalRow>(
      'SELECT id, thread_id, subject_id, rule_id, status, decisions FROM veridex_approvals',
    )
  ).rows;
  const rail = new Map(
    (
      await db.query<{ key: string; executions: number; first_ms: number }>(
        `SELECT idempotency_key AS key, count(*)::int AS executions,
                (extract(epoch FROM min(executed_at)) * 1000)::float8 AS first_ms
         FROM veridex_test_payment_rail GROUP BY idempotency_key`,
      )
    ).rows.map((row) => [row.key, row]),
  );
  const witness = (
    await db.query<{
      approval_id: string;
      new_status: string;
      late: boolean;
      early: boolean;
      at_ms: number;
    }>(
      `SELECT approval_id, new_status, at > expires_at AS late, at < expires_at AS early,
              (extract(epoch FROM at) * 1000)::float8 AS at_ms
       FROM soak_approval_log WHERE new_status IN ('approved', 'expired')`,
    )
  ).rows;
  const seenDecisions = (
    await db.query<{ approval_id: string; decision_id: string; process: string }>(
      'SELECT approval_id, decision_id, process FROM soak_decisions',
    )
  ).rows;

  const report: CheckReport = {
    threads: threads.length,
    byState: {},
    failedCodes: {},
    approvals: approvals.length,
    approvalsByStatus: {},
    executed: [...rail.values()].reduce((sum, row) => sum + row.executions, 0),
    double: [...rail.values()].filter((row) => row.executions > 1).length,
    lost: 0,
    approvedPending: 0,
    rejectedExecuted: 0,
    expiredExecuted: 0,
    unapprovedExecuted: 0,
    approvedAfterDeadline: 0,
    expiredEarly: 0,
    decisionsLost: 0,
    stuck: 0,
    untyped: 0,
    chainsChecked: 0,
    chainsBroken: 0,
    checkpointsChecked: 0,
    checkpointsBroken: 0,
    evidenceChecked: 0,
    evidenceInvalid: 0,
    evidenceMissing: 0,
    approvalToExecution: [],
    problems,
  };
  for (const row of rail.values()) {
    if (row.executions > 1) problem(`double execution: ${row.key} ×${row.executions}`);
  }
  const threadById = new Map(threads.map((thread) => [thread.id, thread]));
  const finished = (id: string) => {
    const state = threadById.get(id)?.state;
    return state === 'completed' || state === 'failed';
  };
  const approvedAt = new Map<string, number>();
  for (const row of witness) {
    if (row.new_status === 'approved') {
      approvedAt.set(row.approval_id, row.at_ms);
      if (row.late) {
        report.approvedAfterDeadline += 1;
        problem(`approval ${row.approval_id} was approved after its deadline (database clock)`);
      }
    } else if (row.early) {
      report.expiredEarly += 1;
      problem(`approval ${row.approval_id} expired before its deadline (database clock)`);
    }
  }
  const approvedKeys = new Set<string>();
  for (const approval of approvals) {
    bump(report.approvalsByStatus, approval.status);
    if (approval.rule_id === 'treasury.transfer_in_doubt') continue;
    const key = idempotencyKeyFor({
      threadId: approval.thread_id,
      toolCallId: approval.subject_id,
    });
    const executions = rail.get(key)?.executions ?? 0;
    if (approval.status === 'approved') {
      approvedKeys.add(key);
      if (executions === 0) {
        if (finished(approval.thread_id)) {
          report.lost += 1;
          problem(`approved ${approval.id} (thread ${approval.thread_id}) never executed`);
        } else report.approvedPending += 1;
      } else {
        const at = approvedAt.get(approval.id);
        const first = rail.get(key)!.first_ms;
        if (at !== undefined) report.approvalToExecution.push(first - at);
      }
    } else if (executions > 0) {
      if (approval.status === 'rejected') report.rejectedExecuted += 1;
      else report.expiredExecuted += 1;
      problem(`${approval.status} ${approval.id} executed ${executions}×`);
    }
  }
  for (const key of rail.keys()) {
    if (!approvedKeys.has(key)) {
      report.unapprovedExecuted += 1;
      problem(`rail executed ${key} with no approved request`);
    }
  }
  const recorded = new Map(
    approvals.map((approval) => [
      approval.id,
      new Set(approval.decisions.map((d) => d.decisionId)),
    ]),
  );
  for (const seen of seenDecisions) {
    if (!recorded.get(seen.approval_id)?.has(seen.decision_id)) {
      report.decisionsLost += 1;
      problem(
        `decision ${seen.decision_id} on ${seen.approval_id} (by ${seen.process}) is not recorded`,
      );
    }
  }

  const verifier = new Ed25519Verifier(evidence.publicKey);
  // The directory as an auditor would export it (`veridex approvers export`).
  const trusted = await stack.approvals.directory.list();
  for (const thread of threads) {
    bump(report.byState, thread.state);
    if (thread.state === 'failed') {
      bump(report.failedCodes, thread.error_code ?? 'none');
      if (!thread.error_code || thread.error_code === 'untyped') {
        report.untyped += 1;
        problem(`thread ${thread.id} failed without a typed code`);
      }
    }
    const config = { configurable: { thread_id: thread.id } };
    const state = await stack.graph.getState(config);
    const started = state.createdAt !== undefined;
    if (thread.state === 'completed') {
      if (!isThreadFinished(state)) {
        report.stuck += 1;
        problem(`thread ${thread.id} is recorded completed but the graph has more to run`);
      }
    } else if (thread.state !== 'failed' && started) {
      if (isThreadFinished(state)) {
        report.stuck += 1;
        problem(`thread ${thread.id} (${thread.state}) is neither finished nor resumable`);
      }
    }
    const events = await stack.audit.events(thread.id);
    if (events.length > 0) {
      report.chainsChecked += 1;
      const chain = verifyChain(events);
      if (!chain.valid) {
        report.chainsBroken += 1;
        problem(`audit chain of ${thread.id} broken at ${chain.brokenAt}: ${chain.reason}`);
      }
    }
    if (started) {
      report.checkpointsChecked += 1;
      const verified = await stack.checkpointer.verifyThread(thread.id);
      if (!verified.valid) {
        report.checkpointsBroken += 1;
        problem(`checkpoints of ${thread.id}: ${verified.issues.map((i) => i.kind).join(', ')}`);
      }
    }
    if (thread.state === 'completed') {
      let bundle: unknown;
      try {
        bundle = JSON.parse(readFileSync(join(evidence.dir, `${thread.id}.json`), 'utf8'));
      } catch {
        report.evidenceMissing += 1;
        problem(`no evidence bundle for completed thread ${thread.id}`);
        continue;
      }
      report.evidenceChecked += 1;
      const result = verifyEvidence(bundle, { keys: [verifier], approvers: trusted });
      const head = result.body?.events.at(-1)?.hash;
      if (!result.valid || !events.some((event) => event.hash === head)) {
        report.evidenceInvalid += 1;
        problem(
          `evidence of ${thread.id} invalid: ${result.reasons.join('; ') || 'head not in the chain'}`,
        );
      }
    }
  }
  return report;
}
