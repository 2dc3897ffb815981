import { VeridexError } from '../errors/index.js';

/** What a time-lock rule sees about the transfer. */
export interface TimeLockSubject {
  idempotencyKey: string;
  to: string;
  /** Decimal amount, e.g. `"50000.00"`. */
  amount: string;
  currency: string;
  threadId: string;
  /** When the transfer's ceiling reservation was made. */
  reservedAt: Date;
}

/**
 * Execution not before a time. The transfer tool **waits** (abortably) when the lock opens
 * within `maxWaitMs`, and otherwise **fails with `time_locked`** (the reservation is released,
 * nothing is executed, and the failure is stored under the call's idempotency key, so the
 * same call never executes later unnoticed; propose the transfer again after `notBefore`).
 */
export interface TimeLockOptions {
  /**
   * Cooling-off delay counted from the ceiling reservation (default 0). Must not exceed
   * `maxWaitMs`: the tool always sits it out. A retry after a crash starts a new delay.
   */
  delayMs?: number;
  /** Earliest execution time for a transfer (business hours, value date); the later of the two wins. */
  notBefore?: (transfer: TimeLockSubject) => Date | undefined | Promise<Date | undefined>;
  /** Longest the tool waits for a lock to open (default 30 000 ms). */
  maxWaitMs?: number;
}

/** Default for {@link TimeLockOptions.maxWaitMs}. */
export const DEFAULT_TIME_LOCK_WAIT_MS = 30_000;

/**
 * Waits until the transfer may execute. Returns the `notBefore` that applied (undefined when
 * none did).
 * @throws VeridexError `time_locked` when the lock opens later than `maxWaitMs` from now;
 *   the signal's reason when aborted while waiting.
 */
export async function awaitTimeLock(
  options: TimeLockOptions | undefined,
  subject: TimeLockSubject,
  now: () => Date,
  signal?: AbortSignal,
): Promise<Date | undefined> {
  if (!options) return undefined;
  const delayed = options.delayMs ? subject.reservedAt.getTime() + options.delayMs : undefined;
  const scheduled = (await options.notBefore?.(subject))?.getTime();
  const candidates = [delayed, scheduled].filter((time): time is number => time !== undefined);
  if (candidates.length === 0) return undefined;
  const notBefore = new Date(Math.max(...candidates));
  const wait = notBefore.getTime() - now().getTime();
  if (wait <= 0) return notBefore;
  const maxWaitMs = options.maxWaitMs ?? DEFAULT_TIME_LOCK_WAIT_MS;
  if (wait > maxWaitMs) {
    throw new VeridexError(
      'time_locked',
      `This transfer is time-locked until ${notBefore.toISOString()} (${Math.ceil(wait / 1000)} s from now, longer than the ${maxWaitMs} ms the tool waits). Nothing was executed; propose the transfer again after that time.`,
      { details: { notBefore: notBefore.toISOString(), key: subject.idempotencyKey } },
    );
  }
  await sleep(wait, signal);
  return notBefore;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const abort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', abort, { once: true });
  });
}
