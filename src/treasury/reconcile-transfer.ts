import { ApprovalManager, type ApprovalRequest } from '../approvals/index.js';
import { VeridexError } from '../errors/index.js';
import type { SignedDecision } from '../identity/index.js';
import { executeTool } from '../tools/execute-tool.js';
import type { ToolRunResult } from '../tools/execute-tool-types.js';
import type { IdempotencyStore } from '../tools/idempotency-store.js';
import type { AnyGovernedTool } from '../tools/types.js';
import { formatMoney } from './format-money.js';
import {
  callOf,
  normalizeReceipt,
  recordExecution,
  releaseReservation,
} from './transfer-settlement.js';
import type { TreasuryRuntime } from './treasury-runtime.js';
import type { TransferReceipt } from './types.js';

/** What an operator found on the rail for an in-doubt transfer. */
export type ReconcileOutcome = { executed: TransferReceipt } | { executed: false };

/** Options of `kit.reconcile`. */
export interface ReconcileOptions {
  /** Who reconciled (recorded in the audit log; with no `decision`, decides the request in the `unverified` mode). */
  by?: string;
  /**
   * The reconciler's signed approval of the pending reconciliation request
   * (`signDecision({ request: await kit.reconciliationRequest(key), ... })`).
   */
  decision?: SignedDecision;
  reason?: string;
}

/** What `kit.reconcile` did. */
export type ReconcileResult =
  | { idempotencyKey: string; executed: true; receipt: TransferReceipt; result: ToolRunResult }
  | { idempotencyKey: string; executed: false };

/**
 * Settles an in-doubt transfer after someone checked the rail.
 * - `{ executed: receipt }`: the spend is committed with the receipt, and the idempotency key
 *   is completed through runTool's recovery path (same output validation and sanitiser as a
 *   retry); a retry of the call then returns the receipt and never pays.
 * - `{ executed: false }`: the reservation and the key are released; a retry of the same call
 *   (same thread, tool call and approved proposal) runs the whole pipeline again — screening,
 *   balance, ceilings — and executes.
 * With `by`, the pending reconciliation request is approved by `by` first (an approver the
 * ApprovalManager refuses makes the call throw before anything is settled).
 *
 * @throws VeridexError `idempotency_conflict` when the key is not in doubt, when no transfer
 *   was recorded for it but a receipt is given, or when the ledger already holds a receipt
 *   and `executed: false` is claimed; `input_invalid` for a malformed receipt; the
 *   ApprovalManager's refusals (`approver_not_allowed`, `proposer_cannot_approve`) for `by`.
 */
export async function reconcileTransfer(
  runtime: TreasuryRuntime,
  tool: AnyGovernedTool,
  idempotency: IdempotencyStore,
  key: string,
  outcome: ReconcileOutcome,
  options: ReconcileOptions = {},
): Promise<ReconcileResult> {
  const state = (await idempotency.get(key))?.state;
  if (state !== 'in_doubt') {
    throw new VeridexError(
      'idempotency_conflict',
      `Transfer ${key} is ${state ?? 'unknown'}, not in doubt: there is nothing to reconcile.`,
      { details: { key, state: state ?? null } },
    );
  }
  const record = await runtime.ceilings.get(key);
  const by = options.by ? { reconciledBy: options.by } : {};
  if (outcome.executed === false) {
    if (record?.state === 'committed') {
      throw new VeridexError(
        'idempotency_conflict',
        `The ledger holds receipt ${record.receipt?.reference} for transfer ${key}: it did execute. Reconcile it with that receipt.`,
        { details: { key } },
      );
    }
    // The decision first: an approver the manager refuses leaves everything unchanged.
    await decideRequest(runtime, record?.threadId, record?.toolCallId, options, 'not executed');
    if (record) {
      const why = `reconciled as not executed${options.by ? ` by ${options.by}` : ''}`;
      await releaseReservation(runtime, callOf(record).scope, why);
    }
    await idempotency.resolve(key, { state: 'released' });
    return { idempotencyKey: key, executed: false };
  }
  if (!record) {
    throw new VeridexError(
      'idempotency_conflict',
      `No transfer was recorded for ${key} (the kit never reserved it), so it cannot have executed.`,
      { details: { key } },
    );
  }
  const receipt = normalizeReceipt(outcome.executed, key, runtime.now());
  if (!receipt) {
    throw new VeridexError(
      'input_invalid',
      `The receipt for ${key} must be { reference: string, idempotencyKey?: "${key}", executedAt?, network?, details? }.`,
      { details: { key } },
    );
  }
  await decideRequest(
    runtime,
    record.threadId,
    record.toolCallId,
    options,
    `executed (${receipt.reference})`,
  );
  const call = callOf(record);
  const recorded = await recordExecution(runtime, call, receipt, {
    source: 'reconciliation',
    ...by,
  });
  const result = await executeTool(
    tool,
    {
      to: call.to,
      amount: formatMoney(call.amount),
      currency: call.amount.currency,
      ...(call.memo ? { memo: call.memo } : {}),
    },
    {
      threadId: record.threadId,
      runId: record.runId,
      toolCallId: record.toolCallId,
      proposalHash: record.proposalHash,
      idempotency,
      audit: runtime.audit,
    },
  );
  return { idempotencyKey: key, executed: true, receipt: recorded.receipt, result };
}

async function decideRequest(
  runtime: TreasuryRuntime,
  threadId: string | undefined,
  toolCallId: string | undefined,
  options: ReconcileOptions,
  finding: string,
): Promise<void> {
  if (!runtime.approvals || (!options.by && !options.decision) || threadId === undefined) return;
  const id = reconciliationRequestId(threadId, toolCallId);
  const request = await runtime.approvals.get(id);
  if (request?.status !== 'pending') return;
  await runtime.approvals.decide(
    id,
    options.decision ?? {
      decision: 'approve',
      approver: options.by!,
      reason: options.reason ?? `Reconciled on the rail: ${finding}.`,
    },
  );
}

/** The id of the reconciliation request opened for an in-doubt transfer of a tool call. */
export function reconciliationRequestId(threadId: string, toolCallId: string | undefined): string {
  return ApprovalManager.approvalId(threadId, `${toolCallId}:reconcile`);
}

/** The reconciliation request of the in-doubt transfer `key` (to sign a decision on), if one is open. */
export async function findReconciliationRequest(
  runtime: TreasuryRuntime,
  key: string,
): Promise<ApprovalRequest | undefined> {
  const record = await runtime.ceilings.get(key);
  if (!runtime.approvals || !record) return undefined;
  return runtime.approvals.get(reconciliationRequestId(record.threadId, record.toolCallId));
}
