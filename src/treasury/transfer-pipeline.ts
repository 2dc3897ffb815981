import { VeridexError } from '../errors/index.js';
import type { AnyGovernedTool, ToolExecuteArgs } from '../tools/types.js';
import { formatMoney, moneyJson } from './format-money.js';
import { compareMoney, type Money, toMoney } from './money.js';
import { parseMoney } from './parse-money.js';
import { awaitTimeLock } from './time-lock.js';
import { TransferRejectedError } from './transfer-rejected-error.js';
import {
  escalateInDoubt,
  normalizeReceipt,
  recordExecution,
  releaseReservation,
  settleRecorded,
  type TransferCall,
  type TransferOutput,
} from './transfer-settlement.js';
import { transferEvent } from './treasury-events.js';
import { checkCounterparty, limitsFor, type TreasuryRuntime } from './treasury-runtime.js';

/** The transfer tool's arguments, as the model sends them. */
export interface TransferInput {
  to: string;
  /** Decimal string, e.g. `"50000.00"`. */
  amount: string;
  currency: string;
  memo?: string;
}

/**
 * The transfer pipeline, in the order of seed 002 (runTool has already reserved the
 * idempotency key): ledger guard → sanctions screening → balance check → ceiling
 * reservation → time-lock → `executing` mark → executor → ceiling commit → receipt. Every
 * step is an audit event with a deterministic id. Failures before the executor release the
 * reservation and fail definitively; an executor error that may hide a payment is settled
 * with `lookup` or escalated as `transfer_in_doubt` (the key then stays in doubt).
 */
export async function executeTransfer(
  runtime: TreasuryRuntime,
  tool: AnyGovernedTool,
  { input, idempotencyKey, context, signal }: ToolExecuteArgs<TransferInput>,
): Promise<TransferOutput> {
  const amount = parseMoney(input.amount, input.currency, { currencies: runtime.currencies });
  const to = input.to.trim();
  const scope = {
    threadId: context.threadId,
    runId: context.runId,
    toolCallId: context.toolCallId,
    idempotencyKey,
  };
  const call: TransferCall = { scope, to, amount, ...(input.memo ? { memo: input.memo } : {}) };

  // 0. A transfer the ledger already knows is settled, never repeated (this also covers an
  //    idempotency store that forgot the key, e.g. in memory across a restart).
  let recorded = await runtime.ceilings.get(idempotencyKey);
  if (recorded?.state === 'executing' || recorded?.state === 'committed') {
    const settled = await settleRecorded(runtime, tool, recorded);
    if (settled.status === 'executed') return settled.output;
    if (settled.status === 'unknown') throw settled.error;
    recorded = await runtime.ceilings.get(idempotencyKey);
  }
  const attempt = !recorded
    ? 1
    : recorded.state === 'released'
      ? recorded.attempt + 1
      : recorded.attempt;
  let holding = recorded?.state === 'reserved';
  const fail = async (error: unknown, reason: string): Promise<never> => {
    if (holding) await releaseReservation(runtime, scope, reason);
    throw error;
  };
  // A screener or balance provider that throws must not strand a reservation either.
  const guarded = <T>(step: () => Promise<T>): Promise<T> =>
    step().catch((error: unknown) => fail(error, 'screening or balance check failed'));

  // 1. Screening, again: lists change while approvals wait.
  const screening = await guarded(() => checkCounterparty(runtime, to));
  const screened = transferEvent(scope, 'counterparty_screened', { to, ...screening }, attempt);
  if (screening.status !== 'clear') {
    await runtime.audit.append(screened);
    const hit = screening.status === 'hit';
    return fail(
      new VeridexError(
        hit ? 'sanctions_hit' : 'policy_denied',
        `Transfer to ${to} refused: ${screening.reason} (${screening.source}). Nothing was executed; do not retry this counterparty.`,
        { details: { key: idempotencyKey, source: screening.source } },
      ),
      `counterparty ${screening.status}`,
    );
  }

  // 2. Balance.
  const available = await guarded(() => balanceOf(runtime, amount));
  const sufficient = compareMoney(available, amount) >= 0;
  await runtime.audit.appendMany([
    screened,
    transferEvent(
      scope,
      'balance_checked',
      { via: 'transfer', available: moneyJson(available), required: moneyJson(amount), sufficient },
      attempt,
    ),
  ]);
  if (!sufficient) {
    return fail(
      new VeridexError(
        'insufficient_funds',
        `Insufficient funds: the transfer needs ${formatMoney(amount, { withCurrency: true })} but ${formatMoney(available, { withCurrency: true })} is available. Nothing was executed.`,
        {
          details: {
            key: idempotencyKey,
            required: formatMoney(amount),
            available: formatMoney(available),
          },
        },
      ),
      'insufficient funds',
    );
  }

  // 3. Ceiling reservation (the real enforcement of the limits; the policy only pre-checks).
  const limits = limitsFor(runtime, amount.currency);
  const reserved = await runtime.ceilings.reserve({
    idempotencyKey,
    appId: runtime.appId,
    agentId: runtime.agentId,
    currency: amount.currency,
    amount,
    counterparty: to,
    ...(call.memo ? { memo: call.memo } : {}),
    threadId: scope.threadId,
    runId: scope.runId,
    toolCallId: scope.toolCallId,
    proposalHash: context.proposalHash,
    limits,
    now: runtime.now(),
  });
  holding = true;
  const reservation = reserved.reservation;
  if (reservation.state !== 'reserved') {
    // Another execution got further with this key meanwhile: settle, never repeat.
    const settled = await settleRecorded(runtime, tool, reservation);
    if (settled.status === 'executed') return settled.output;
    throw settled.status === 'unknown' ? settled.error : inDoubtRace(idempotencyKey);
  }
  // Appended even for a reservation left by a crashed attempt (a no-op if it was recorded).
  await runtime.audit.append(
    transferEvent(
      scope,
      'ceiling_reserved',
      {
        amount: moneyJson(amount),
        attempt: reservation.attempt,
        windowTotal: moneyJson(reserved.windowTotal),
        ...(limits.dailyLimit ? { dailyLimit: moneyJson(limits.dailyLimit) } : {}),
        ...(limits.perTransactionMax
          ? { perTransactionMax: moneyJson(limits.perTransactionMax) }
          : {}),
        windowMs: limits.windowMs,
      },
      reservation.attempt,
    ),
  );

  // 4. Time-lock: wait (bounded) or fail with time_locked.
  try {
    await awaitTimeLock(
      runtime.timeLock,
      {
        idempotencyKey,
        to,
        amount: formatMoney(amount),
        currency: amount.currency,
        threadId: scope.threadId,
        reservedAt: reservation.reservedAt,
      },
      runtime.now,
      signal,
    );
    signal.throwIfAborted();
  } catch (error) {
    if (holding)
      await releaseReservation(
        runtime,
        scope,
        VeridexError.is(error, 'time_locked') ? 'time-locked' : 'cancelled before execution',
      );
    throw error;
  }

  // 5. Executor, with `executing` recorded first: from here a crash leaves the transfer in doubt.
  await runtime.ceilings.markExecuting(idempotencyKey, runtime.now());
  let raw: unknown;
  try {
    raw = await runtime.executor.execute(
      {
        idempotencyKey,
        to,
        amount,
        ...(call.memo ? { memo: call.memo } : {}),
        appId: runtime.appId,
        agentId: runtime.agentId,
        threadId: scope.threadId,
        toolCallId: scope.toolCallId,
        approvedBy: context.approvedBy,
      },
      { signal },
    );
  } catch (error) {
    return afterExecutorError(runtime, tool, call, error);
  }
  const receipt = normalizeReceipt(raw, idempotencyKey, runtime.now());
  if (!receipt) {
    const reason = 'the executor returned a malformed receipt or one for another idempotency key';
    throw await escalateInDoubt(runtime, tool, call, reason);
  }

  // 6. Commit the spend and record the receipt.
  const executed = await recordExecution(runtime, call, receipt, {
    source: 'executor',
    approvedBy: [...context.approvedBy],
  });
  return executed.output;
}

async function balanceOf(runtime: TreasuryRuntime, amount: Money): Promise<Money> {
  const raw = await runtime.balance.getBalance(amount.currency, {
    appId: runtime.appId,
    agentId: runtime.agentId,
  });
  const balance = toMoney(raw, 'balance');
  if (balance.currency !== amount.currency) {
    throw new VeridexError(
      'tool_failed',
      `The balance provider answered in ${balance.currency} when asked for ${amount.currency}; fix the provider.`,
    );
  }
  return balance;
}

/**
 * The executor threw. A `TransferRejectedError` means nothing moved: release and fail. Any
 * other error may hide a payment (a timeout after the rail accepted it): ask `lookup` when
 * there is one, else escalate as in doubt.
 */
async function afterExecutorError(
  runtime: TreasuryRuntime,
  tool: AnyGovernedTool,
  call: TransferCall,
  error: unknown,
): Promise<TransferOutput> {
  const message = error instanceof Error ? error.message : String(error);
  if (TransferRejectedError.is(error)) {
    await releaseReservation(runtime, call.scope, `rejected by the rail: ${message}`);
    throw new VeridexError(
      'tool_failed',
      `The payment rail rejected the transfer: ${message}. Nothing was executed.`,
      {
        cause: error,
        details: { key: call.scope.idempotencyKey, railCode: error.railCode ?? null },
      },
    );
  }
  const key = call.scope.idempotencyKey;
  if (runtime.executor.lookup) {
    const found = await runtime.executor.lookup(key);
    if (found === undefined) {
      await releaseReservation(
        runtime,
        call.scope,
        `executor failed (${message}); lookup: not executed`,
      );
      throw new VeridexError(
        'tool_failed',
        `The payment rail failed (${message}) and confirms that nothing was executed. Try again later.`,
        { cause: error, details: { key } },
      );
    }
    const receipt = normalizeReceipt(found, key, runtime.now());
    if (receipt) {
      return (await recordExecution(runtime, call, receipt, { source: 'lookup' })).output;
    }
  }
  throw await escalateInDoubt(runtime, tool, call, `the executor failed with "${message}"`);
}

function inDoubtRace(key: string): VeridexError {
  return new VeridexError(
    'transfer_in_doubt',
    `Transfer ${key} was settled by another execution while this one ran; it is not repeated.`,
    { details: { key } },
  );
}
