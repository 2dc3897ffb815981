import { type BaseMessage, isAIMessage, isHumanMessage } from '@langchain/core/messages';
import { VeridexError } from '../errors/index.js';

/**
 * Limits of one run (a user turn and its resumes), after seed 004's fuel model. Tool-call
 * fuel is enforced by the policy rule `rules.callLimit` (the prebuilt agent adds it from
 * `maxToolCalls`/`toolCosts`); tokens are checked before each model call; wall-clock time and
 * external cancellation abort the run through an `AbortSignal` passed to the model and tools.
 */
export interface RunBudget {
  /** Total model tokens (input + output) the run may spend. */
  maxTokens?: number;
  /** Tool-call fuel per run (each call costs 1 unless `toolCosts` says otherwise). */
  maxToolCalls?: number;
  /** Fuel cost per tool: static, or computed from the arguments. */
  toolCosts?: Readonly<Record<string, number | ((args: Record<string, unknown>) => number)>>;
  /** Wall-clock limit of one `run`/`resume` call, in milliseconds. */
  maxWallClockMs?: number;
  /** External cancellation. */
  signal?: AbortSignal;
}

/** The reason a budget-driven abort carries, so callers can tell it from other aborts. */
export class BudgetExhaustedError extends VeridexError {
  constructor(what: string) {
    super(
      'budget_exhausted',
      `Run budget exhausted: ${what}. The run stopped at its last completed step.`,
    );
  }
}

/** Tokens spent by the model since the last user message (the current run), from `usage_metadata`. */
export function tokensUsedThisRun(messages: readonly BaseMessage[]): number {
  const start = messages.findLastIndex((message) => isHumanMessage(message));
  let total = 0;
  for (const message of messages.slice(start + 1)) {
    if (isAIMessage(message)) total += message.usage_metadata?.total_tokens ?? 0;
  }
  return total;
}

/**
 * The signal for one run: aborts on the wall-clock limit (reason: {@link BudgetExhaustedError})
 * or when the caller's signal aborts. Returns `undefined` when neither is configured.
 */
export function runSignal(budget: RunBudget | undefined): AbortSignal | undefined {
  const signals: AbortSignal[] = [];
  if (budget?.signal) signals.push(budget.signal);
  if (budget?.maxWallClockMs !== undefined) {
    const controller = new AbortController();
    const timer = setTimeout(
      () =>
        controller.abort(
          new BudgetExhaustedError(`wall-clock limit of ${budget.maxWallClockMs} ms reached`),
        ),
      budget.maxWallClockMs,
    );
    timer.unref();
    signals.push(controller.signal);
  }
  if (signals.length === 0) return undefined;
  return signals.length === 1 ? signals[0] : AbortSignal.any(signals);
}
