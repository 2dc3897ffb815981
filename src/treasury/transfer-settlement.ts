import { z } from 'zod';
import { ApprovalManager } from '../approvals/index.js';
import { VeridexError } from '../errors/index.js';
import { buildToolProposal } from '../policy/index.js';
import type { AnyGovernedTool } from '../tools/types.js';
import type { CeilingReservation } from './ceiling-store.js';
import { formatMoney, moneyJson } from './format-money.js';
import type { Money } from './money.js';
import { type TransferScope, transferEvent } from './treasury-events.js';
import type { TreasuryRuntime } from './treasury-runtime.js';
import type { TransferReceipt } from './types.js';

/** One transfer as the pipeline and the recovery see it. */
export interface TransferCall {
  scope: TransferScope;
  to: string;
  amount: Money;
  memo?: string;
}

/** What the transfer tool returns to the model. */
export const transferOutputSchema = z.object({
  status: z.literal('executed'),
  reference: z.string(),
  to: z.string(),
  amount: z.string(),
  currency: z.string(),
  idempotencyKey: z.string(),
  executedAt: z.string(),
  network: z.string().optional(),
});

/** The transfer tool's output. */
export type TransferOutput = z.infer<typeof transferOutputSchema>;

/** How an interrupted or recorded transfer was settled. */
export type Settlement =
  | { status: 'executed'; output: TransferOutput; receipt: TransferReceipt }
  | { status: 'not_executed' }
  | { status: 'unknown'; error: VeridexError };

const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);
const receiptSchema = z.object({
  reference: z.string().min(1).max(512),
  idempotencyKey: z.string().optional(),
  executedAt: z.string().max(64).optional(),
  network: z.string().max(64).optional(),
  details: z.record(z.string(), scalar).optional(),
});

/** A receipt checked and completed (key and time filled in), or undefined when it is not one. */
export function normalizeReceipt(
  raw: unknown,
  key: string,
  now: Date,
): TransferReceipt | undefined {
  const parsed = receiptSchema.safeParse(raw);
  if (!parsed.success) return undefined;
  if (parsed.data.idempotencyKey !== undefined && parsed.data.idempotencyKey !== key)
    return undefined;
  return {
    ...parsed.data,
    idempotencyKey: key,
    executedAt: parsed.data.executedAt ?? now.toISOString(),
  };
}

/** The call behind a ledger row. */
export function callOf(record: CeilingReservation): TransferCall {
  return {
    scope: {
      threadId: record.threadId,
      runId: record.runId,
      toolCallId: record.toolCallId,
      idempotencyKey: record.idempotencyKey,
    },
    to: record.counterparty,
    amount: record.amount,
    ...(record.memo === undefined ? {} : { memo: record.memo }),
  };
}

/**
 * Commits the spend with its receipt and records `transfer_executed` and `ceiling_committed`
 * (idempotent: a committed key and existing events are left as they are).
 */
export async function recordExecution(
  runtime: TreasuryRuntime,
  call: TransferCall,
  receipt: TransferReceipt,
  facts: Record<string, unknown>,
): Promise<Settlement & { status: 'executed' }> {
  const committed = await runtime.ceilings.commit(
    call.scope.idempotencyKey,
    receipt,
    runtime.now(),
  );
  const stored = committed.receipt ?? receipt;
  await runtime.audit.appendMany([
    transferEvent(call.scope, 'transfer_executed', {
      to: call.to,
      amount: moneyJson(call.amount),
      receipt: stored,
      ...facts,
    }),
    transferEvent(
      call.scope,
      'ceiling_committed',
      { amount: moneyJson(call.amount), attempt: committed.attempt, reference: stored.reference },
      committed.attempt,
    ),
  ]);
  const output: TransferOutput = {
    status: 'executed',
    reference: stored.reference,
    to: call.to,
    amount: formatMoney(call.amount),
    currency: call.amount.currency,
    idempotencyKey: call.scope.idempotencyKey,
    executedAt: stored.executedAt ?? runtime.now().toISOString(),
    ...(stored.network ? { network: stored.network } : {}),
  };
  return { status: 'executed', output, receipt: stored };
}

/** Releases the key's live reservation (if any) and records `ceiling_released`. */
export async function releaseReservation(
  runtime: TreasuryRuntime,
  scope: TransferScope,
  reason: string,
): Promise<CeilingReservation | undefined> {
  const released = await runtime.ceilings.release(scope.idempotencyKey, runtime.now());
  if (released) {
    await runtime.audit.append(
      transferEvent(
        scope,
        'ceiling_released',
        { amount: moneyJson(released.amount), attempt: released.attempt, reason },
        released.attempt,
      ),
    );
  }
  return released;
}

/**
 * Records `transfer_in_doubt` and, with an ApprovalManager, opens a `human_required` request
 * asking an operator to reconcile the transfer on the rail (it shows up in
 * `veridex approvals list`). Returns the `transfer_in_doubt` error for the model.
 */
export async function escalateInDoubt(
  runtime: TreasuryRuntime,
  tool: AnyGovernedTool,
  call: TransferCall,
  reason: string,
): Promise<VeridexError> {
  const { scope } = call;
  const subjectId = `${scope.toolCallId}:reconcile`;
  const approvalId = runtime.approvals
    ? ApprovalManager.approvalId(scope.threadId, subjectId)
    : undefined;
  const what = `${formatMoney(call.amount, { withCurrency: true })} to ${call.to}`;
  await runtime.audit.append(
    transferEvent(scope, 'transfer_in_doubt', {
      to: call.to,
      amount: moneyJson(call.amount),
      reason,
      ...(approvalId ? { approvalId } : {}),
    }),
  );
  if (runtime.approvals) {
    const args = {
      to: call.to,
      amount: formatMoney(call.amount),
      currency: call.amount.currency,
      idempotencyKey: scope.idempotencyKey,
    };
    const proposal = buildToolProposal({
      tool,
      arguments: args,
      threadId: scope.threadId,
      runId: scope.runId,
      toolCallId: subjectId,
      proposer: runtime.agentId,
    });
    await runtime.approvals.request(
      proposal,
      {
        verdict: 'escalate',
        route: 'human_required',
        reason: `Transfer ${scope.idempotencyKey} (${what}) may have executed on the payment rail: ${reason}. Check the rail for this idempotency key, then settle it with kit.reconcile(key, { executed: receipt }) or kit.reconcile(key, { executed: false }).`,
        ruleId: 'treasury.transfer_in_doubt',
        ruleName: 'In-doubt transfers need reconciliation',
        evaluations: [],
      },
      {
        summary: { kind: 'transfer_reconciliation', idempotencyKey: scope.idempotencyKey, reason },
      },
    );
  }
  return new VeridexError(
    'transfer_in_doubt',
    `The transfer of ${what} may or may not have executed (${reason}). It will not be repeated automatically${approvalId ? `; approval request ${approvalId} asks an operator to reconcile it` : '; an operator must reconcile it'} (idempotency key ${scope.idempotencyKey}). Do not propose it again.`,
    { details: { key: scope.idempotencyKey, ...(approvalId ? { approvalId } : {}) } },
  );
}

/**
 * Settles a transfer the ledger already knows, without executing anything: committed →
 * executed (its receipt); reserved or released → not executed (released); executing → asks
 * `executor.lookup` when there is one (receipt → committed; none → released), otherwise in
 * doubt and escalated.
 */
export async function settleRecorded(
  runtime: TreasuryRuntime,
  tool: AnyGovernedTool,
  record: CeilingReservation,
): Promise<Settlement> {
  const call = callOf(record);
  switch (record.state) {
    case 'committed':
      return recordExecution(runtime, call, record.receipt!, { source: 'ledger' });
    case 'reserved':
      await releaseReservation(runtime, call.scope, 'interrupted before the executor was called');
      return { status: 'not_executed' };
    case 'released':
      return { status: 'not_executed' };
    case 'executing': {
      if (!runtime.executor.lookup) {
        const reason =
          'the executor was called but no receipt was recorded, and the executor has no lookup';
        return { status: 'unknown', error: await escalateInDoubt(runtime, tool, call, reason) };
      }
      const found = await runtime.executor.lookup(record.idempotencyKey);
      if (found === undefined) {
        await releaseReservation(runtime, call.scope, 'executor lookup: no transfer with this key');
        return { status: 'not_executed' };
      }
      const receipt = normalizeReceipt(found, record.idempotencyKey, runtime.now());
      if (!receipt) {
        const reason = 'executor lookup returned a malformed receipt or one for another key';
        return { status: 'unknown', error: await escalateInDoubt(runtime, tool, call, reason) };
      }
      return recordExecution(runtime, call, receipt, { source: 'lookup' });
    }
  }
}
