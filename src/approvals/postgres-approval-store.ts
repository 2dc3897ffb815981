import type { Database } from '../db/index.js';
import type { ApprovalStore } from './approval-store.js';
import {
  INSERT_IF_ABSENT,
  LIST_BY_THREAD,
  LIST_PENDING,
  MARK_RESUMED_IN_GRAPH,
  SELECT_BY_ID,
  SELECT_CLOCK,
  SELECT_FOR_UPDATE,
  UPDATE_STATE,
} from './sql.js';
import type { ApprovalRequest } from './types.js';

/** A `veridex_approvals` row as node-postgres returns it. */
export interface ApprovalRow {
  id: string;
  thread_id: string;
  run_id: string;
  subject_id: string;
  proposal_hash: string;
  proposal: Record<string, unknown>;
  summary: Record<string, unknown>;
  route: ApprovalRequest['route'];
  rule_id: string;
  rule_name: string;
  reason: string;
  tiers: ApprovalRequest['tiers'];
  tier_index: number;
  proposer: string;
  status: ApprovalRequest['status'];
  created_at: Date;
  expires_at: Date;
  decided_at: Date | null;
  decisions: ApprovalRequest['decisions'];
  proposers: string[];
  identity_mode: ApprovalRequest['identityMode'];
}

/** The request a `veridex_approvals` row holds (for services that query the table directly). */
export function approvalFromRow(row: ApprovalRow): ApprovalRequest {
  return {
    id: row.id,
    threadId: row.thread_id,
    runId: row.run_id,
    subjectId: row.subject_id,
    proposalHash: row.proposal_hash,
    proposal: row.proposal,
    summary: row.summary,
    route: row.route,
    ruleId: row.rule_id,
    ruleName: row.rule_name,
    reason: row.reason,
    tiers: row.tiers,
    tierIndex: row.tier_index,
    proposer: row.proposer,
    proposers: row.proposers,
    identityMode: row.identity_mode,
    status: row.status,
    createdAt: row.created_at.toISOString(),
    expiresAt: row.expires_at.toISOString(),
    ...(row.decided_at ? { decidedAt: row.decided_at.toISOString() } : {}),
    decisions: row.decisions,
  };
}

/**
 * An {@link ApprovalStore} in `veridex_approvals` (PostgreSQL or PGlite; run `migrate()` first).
 * Decisions lock the row (`FOR UPDATE`), so deciding from several processes at once is safe,
 * and are judged by the database's clock, so a process whose clock is off cannot approve after
 * a deadline or expire a request early.
 */
export class PostgresApprovalStore implements ApprovalStore {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async insertIfAbsent(request: ApprovalRequest): Promise<ApprovalRequest> {
    const { rows } = await this.#db.query<ApprovalRow>(INSERT_IF_ABSENT, [
      request.id,
      request.threadId,
      request.runId,
      request.subjectId,
      request.proposalHash,
      JSON.stringify(request.proposal),
      JSON.stringify(request.summary),
      request.route,
      request.ruleId,
      request.ruleName,
      request.reason,
      JSON.stringify(request.tiers),
      request.tierIndex,
      request.proposer,
      request.status,
      request.createdAt,
      request.expiresAt,
      request.decidedAt ?? null,
      JSON.stringify(request.decisions),
      JSON.stringify(request.proposers),
      request.identityMode,
    ]);
    return approvalFromRow(rows[0]!);
  }

  async get(id: string): Promise<ApprovalRequest | undefined> {
    const { rows } = await this.#db.query<ApprovalRow>(SELECT_BY_ID, [id]);
    return rows[0] && approvalFromRow(rows[0]);
  }

  update<T>(
    id: string,
    mutate: (
      current: ApprovalRequest,
      storeNow: Date | undefined,
    ) => { next: ApprovalRequest | undefined; result: T; resumedInGraph?: boolean },
  ): Promise<T | undefined> {
    return this.#db.transaction(async (tx) => {
      const { rows } = await tx.query<ApprovalRow & { store_now: Date }>(SELECT_FOR_UPDATE, [id]);
      if (!rows[0]) return undefined;
      const { next, result, resumedInGraph } = mutate(approvalFromRow(rows[0]), rows[0].store_now);
      if (next) {
        await tx.query(UPDATE_STATE, [
          id,
          next.status,
          next.tierIndex,
          next.expiresAt,
          next.decidedAt ?? null,
          JSON.stringify(next.decisions),
        ]);
        // Committed with the resolution (and its NOTIFY): a resumer never sees it unresumed.
        if (resumedInGraph && next.status !== 'pending')
          await tx.query(MARK_RESUMED_IN_GRAPH, [id]);
      }
      return result;
    });
  }

  async clock(): Promise<Date> {
    const { rows } = await this.#db.query<{ store_now: Date }>(SELECT_CLOCK);
    return rows[0]!.store_now;
  }

  async listPending(threadId?: string): Promise<ApprovalRequest[]> {
    const { rows } = await this.#db.query<ApprovalRow>(LIST_PENDING, [threadId ?? null]);
    return rows.map(approvalFromRow);
  }

  async listByThread(threadId: string): Promise<ApprovalRequest[]> {
    const { rows } = await this.#db.query<ApprovalRow>(LIST_BY_THREAD, [threadId]);
    return rows.map(approvalFromRow);
  }
}
