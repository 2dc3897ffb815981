import type { EmbeddingsInterface } from '@langchain/core/embeddings';
import type { ApprovalManager } from '../approvals/index.js';
import type { AuditLog } from '../audit/index.js';
import type { Database } from '../db/index.js';
import type { PolicyDecision, ProposalEvaluator } from '../policy/index.js';
import { applyPlan } from './apply-plan.js';
import { MemoryAudit } from './memory-audit.js';
import { type AcceptedWrite, type PlanOptions, planWrites } from './plan-writes.js';
import { type RecordRow, rowToRecord } from './record-row.js';
import { FIND_BY_IDS, FIND_BY_WRITE_IDS, LOCK_NAMESPACE } from './sql.js';
import type { MemoryRecord, MemoryWriteOutcome } from './types.js';
import type { VectorIndex } from './vector-index.js';
import type { WriteDraft } from './write-draft.js';

/** What {@link runWrites} works with. */
export interface WriteDependencies {
  db: Database;
  index: VectorIndex;
  embeddings: EmbeddingsInterface;
  policy: ProposalEvaluator;
  /** Guards switched off by configuration, named on every write (empty when none). */
  weakenedGuards?: readonly string[];
  audit: AuditLog | undefined;
  approvals?: ApprovalManager | undefined;
  plan: PlanOptions;
}

interface Accepted {
  position: number;
  draft: WriteDraft;
  decision: PolicyDecision;
}

/**
 * The write pipeline of a batch of drafts, in order: replays (a write id already stored
 * returns its outcome, nothing is evaluated or written again) → policy, proposal by proposal
 * → one embedding call for the accepted → one transaction (namespaces locked) that plans
 * conflicts, versions and links and applies them → audit events → inverted-file training
 * when due. Outcomes are in input order; a write id repeated in the batch shares its outcome.
 */
export async function runWrites(
  drafts: readonly WriteDraft[],
  dependencies: WriteDependencies,
): Promise<MemoryWriteOutcome[]> {
  const audit = new MemoryAudit(dependencies.audit, dependencies.weakenedGuards ?? []);
  const outcomes = new Array<MemoryWriteOutcome | undefined>(drafts.length);
  const replayed = await replays(dependencies.db, drafts);
  const accepted: Accepted[] = [];
  const first = new Map<string, number>();
  for (const [position, draft] of drafts.entries()) {
    const { proposal } = draft;
    if (first.has(proposal.writeId)) continue;
    first.set(proposal.writeId, position);
    const previous = replayed.get(proposal.writeId);
    if (previous) {
      const outcome = previous(proposal);
      outcomes[position] = outcome;
      // Re-appending is a no-op unless a crash lost the event the first time.
      const status = outcome.status === 'rejected_by_conflict' ? outcome.status : 'written';
      audit.written(proposal, previous.record, status, undefined);
      continue;
    }
    const decision = await dependencies.policy.evaluate(proposal);
    if (decision.verdict === 'deny') {
      audit.denied(proposal, decision);
      outcomes[position] = {
        status: 'denied',
        code: 'memory_write_denied',
        ruleId: decision.ruleId,
        reason: decision.reason,
        proposal,
        decision,
      };
    } else if (decision.verdict === 'escalate') {
      const approvals = dependencies.approvals;
      if (!approvals) {
        outcomes[position] = { status: 'escalated', proposal, decision };
        continue;
      }
      // One request per write id: proposing the same write again finds it, decided or not.
      const request = await approvals.request(proposal, decision, {
        summary: {
          tier: proposal.tier,
          source: proposal.source,
          content: proposal.content.slice(0, 200),
        },
      });
      const current =
        request.status === 'pending' ? ((await approvals.get(request.id)) ?? request) : request;
      if (current.status === 'approved') {
        accepted.push({ position, draft, decision });
      } else if (current.status === 'pending') {
        outcomes[position] = { status: 'escalated', proposal, decision, approvalId: current.id };
      } else {
        const reason = `approval ${current.id} was ${current.status}`;
        audit.denied(proposal, { ...decision, verdict: 'deny', reason } as PolicyDecision);
        outcomes[position] = {
          status: 'denied',
          code: 'memory_write_denied',
          ruleId: decision.ruleId,
          reason,
          proposal,
          decision,
        };
      }
    } else {
      accepted.push({ position, draft, decision });
    }
  }
  if (accepted.length > 0) await store(accepted, dependencies, audit, outcomes);
  await audit.flush();
  return drafts.map(
    (draft, position) => outcomes[position] ?? outcomes[first.get(draft.proposal.writeId)!]!,
  );
}

async function store(
  accepted: readonly Accepted[],
  dependencies: WriteDependencies,
  audit: MemoryAudit,
  outcomes: Array<MemoryWriteOutcome | undefined>,
): Promise<void> {
  const { db, index } = dependencies;
  const vectors = await dependencies.embeddings.embedDocuments(
    accepted.map(({ draft }) => draft.record.content),
  );
  await index.refresh();
  const writes: AcceptedWrite[] = accepted.map(({ draft }, position) => ({
    draft,
    vector: vectors[position]!,
    columns: index.columns(vectors[position]!),
  }));
  const { plan, invalidated } = await db.transaction(async (tx) => {
    const paths = [...new Set(writes.map((write) => write.draft.record.namespace.join('.')))];
    // Sorted, so two batches over the same namespaces lock them in the same order.
    for (const path of paths.sort()) await tx.query(LOCK_NAMESPACE, [path]);
    const planned = await planWrites(tx, writes, dependencies.plan);
    return { plan: planned, invalidated: await applyPlan(tx, planned, index) };
  });
  plan.results.forEach((result, position) => {
    const { draft, decision } = accepted[position]!;
    const proposal = draft.proposal;
    const base = { proposal, decision, replayed: false };
    audit.written(proposal, result.record, result.status, decision);
    const at = accepted[position]!.position;
    if (result.status === 'duplicate') {
      outcomes[at] = { status: 'duplicate', record: result.record, ...base };
    } else if (result.status === 'rejected_by_conflict') {
      audit.invalidated(result.record, result.record);
      outcomes[at] = { ...result, ...base };
    } else {
      const records = result.invalidated
        .map((id) => invalidated.get(id))
        .filter((record) => record !== undefined);
      for (const record of records) audit.invalidated(result.record, record);
      outcomes[at] = { ...result, invalidated: records, ...base };
    }
  });
  await index.trainIfDue(plan.inserts.length);
}

type Replay = ((proposal: WriteDraft['proposal']) => MemoryWriteOutcome) & {
  record: MemoryRecord;
};

/** Outcomes of write ids that are already stored (a re-run node proposing them again). */
async function replays(db: Database, drafts: readonly WriteDraft[]): Promise<Map<string, Replay>> {
  const { rows } = await db.query<RecordRow>(FIND_BY_WRITE_IDS, [
    drafts.map((draft) => draft.proposal.writeId),
  ]);
  const found = new Map<string, Replay>();
  for (const row of rows) {
    const record = rowToRecord(row);
    const rejected =
      record.invalidationReason === 'conflict' && record.invalidatedAt === record.storedAt;
    let winner: MemoryRecord | undefined;
    if (rejected && record.invalidatedBy) {
      const winners = await db.query<RecordRow>(FIND_BY_IDS, [[record.invalidatedBy]]);
      winner = winners.rows[0] ? rowToRecord(winners.rows[0]) : undefined;
    }
    const outcome = (proposal: WriteDraft['proposal']): MemoryWriteOutcome =>
      winner
        ? { status: 'rejected_by_conflict', record, winner, links: [], proposal, replayed: true }
        : { status: 'written', record, invalidated: [], links: [], proposal, replayed: true };
    found.set(record.provenance.writeId, Object.assign(outcome, { record }));
  }
  return found;
}
