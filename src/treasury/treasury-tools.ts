import { z } from 'zod';
import { deriveEventId } from '../audit/index.js';
import { VeridexError } from '../errors/index.js';
import { tool } from '../tools/tool.js';
import type { AnyGovernedTool, ToolRecovery } from '../tools/types.js';
import { EVM_ADDRESS } from './counterparty.js';
import { currencyDecimals } from './currencies.js';
import { formatMoney, moneyJson } from './format-money.js';
import { toMoney } from './money.js';
import { parseMoney } from './parse-money.js';
import { executeTransfer } from './transfer-pipeline.js';
import {
  settleRecorded,
  type TransferOutput,
  transferOutputSchema,
} from './transfer-settlement.js';
import { checkCounterparty, type TreasuryRuntime } from './treasury-runtime.js';

/** Options of the transfer tool. */
export interface TransferToolOptions {
  /** Wall-clock limit of one transfer, time-lock wait included (default 120 000 ms). */
  timeoutMs: number;
}

const NO_CONTROL = /^[^\u0000-\u001f\u007f]*$/;

/** The kit's three tools: `get_balance`, `screen_counterparty` and `transfer`. */
export function treasuryTools(runtime: TreasuryRuntime, options: TransferToolOptions) {
  const currency = z
    .string()
    .describe('Currency code, e.g. "USD"')
    .superRefine((value, issues) => {
      try {
        currencyDecimals(value, runtime.currencies);
      } catch (error) {
        issues.addIssue({ code: 'custom', message: (error as Error).message });
      }
    });

  const getBalance = tool({
    name: 'get_balance',
    description: 'Returns the treasury balance available in one currency, as a decimal string.',
    safetyClass: 'read',
    input: z.object({ currency }),
    output: z.object({ currency: z.string(), amount: z.string() }),
    async execute({ input, context }) {
      const balance = toMoney(
        await runtime.balance.getBalance(input.currency, {
          appId: runtime.appId,
          agentId: runtime.agentId,
        }),
        'balance',
      );
      await runtime.audit.append({
        threadId: context.threadId,
        runId: context.runId,
        type: 'balance_checked',
        eventId: deriveEventId(
          context.threadId,
          'balance_checked',
          'get_balance',
          context.toolCallId,
        ),
        payload: {
          via: 'get_balance',
          toolCallId: context.toolCallId,
          available: moneyJson(balance),
        },
      });
      return { currency: balance.currency, amount: formatMoney(balance) };
    },
  });

  const screenCounterparty = tool({
    name: 'screen_counterparty',
    description:
      'Screens a counterparty (EVM address, account id or name) against the sanctions list, the denylist and the allowlist before proposing a transfer.',
    safetyClass: 'read',
    input: z.object({ counterparty: z.string().min(1).max(256).regex(NO_CONTROL) }),
    output: z.object({
      counterparty: z.string(),
      status: z.enum(['clear', 'hit', 'not_allowed']),
      source: z.string(),
      reason: z.string().optional(),
    }),
    async execute({ input, context }) {
      const check = await checkCounterparty(runtime, input.counterparty);
      await runtime.audit.append({
        threadId: context.threadId,
        runId: context.runId,
        type: 'counterparty_screened',
        eventId: deriveEventId(
          context.threadId,
          'counterparty_screened',
          'screen',
          context.toolCallId,
        ),
        payload: {
          via: 'screen_counterparty',
          toolCallId: context.toolCallId,
          to: input.counterparty,
          ...check,
        },
      });
      return {
        counterparty: check.counterparty,
        status: check.status,
        source: check.source,
        ...(check.reason ? { reason: check.reason } : {}),
      };
    },
  });

  const transferInput = z
    .object({
      to: z
        .string()
        .min(1)
        .max(128)
        .regex(NO_CONTROL)
        .describe('Recipient: an EVM address (0x + 40 hex digits), an account id or an IBAN'),
      amount: z
        .string()
        .max(80)
        .describe(
          'Amount as a decimal string, e.g. "50000.00" — no thousands separators, no exponent',
        ),
      currency,
      memo: z
        .string()
        .max(140)
        .regex(NO_CONTROL)
        .optional()
        .describe('Payment reference, e.g. an invoice number'),
    })
    .superRefine((value, issues) => {
      if (/^0x/i.test(value.to.trim()) && !EVM_ADDRESS.test(value.to.trim())) {
        issues.addIssue({
          code: 'custom',
          path: ['to'],
          message: 'Expected an EVM address as 0x followed by 40 hex digits',
        });
      }
      try {
        parseMoney(value.amount, value.currency, { currencies: runtime.currencies });
      } catch (error) {
        if (!VeridexError.is(error, 'input_invalid') || error.details.field !== 'amount') return;
        issues.addIssue({ code: 'custom', path: ['amount'], message: error.message });
      }
    });

  const transfer: AnyGovernedTool = tool({
    name: 'transfer',
    description:
      'Sends money to a counterparty. Screens the counterparty, checks the balance and the spending ceilings, and executes at most once per call. Large amounts need human approval.',
    safetyClass: 'financial',
    idempotency: 'required',
    timeoutMs: options.timeoutMs,
    input: transferInput,
    output: transferOutputSchema,
    execute: (args) =>
      executeTransfer(runtime, transfer, args as Parameters<typeof executeTransfer>[2]),
    async recover({ idempotencyKey }): Promise<ToolRecovery<TransferOutput>> {
      const recorded = await runtime.ceilings.get(idempotencyKey);
      // No ledger row: the pipeline stopped before reserving, so the executor never ran.
      if (!recorded) return { status: 'not_executed' };
      const settled = await settleRecorded(runtime, transfer, recorded);
      return settled.status === 'executed'
        ? { status: 'executed', output: settled.output }
        : settled;
    },
  });

  return { getBalance, screenCounterparty, transfer };
}
