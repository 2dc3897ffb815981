/**
 * An error a tool throws to say "this attempt failed, trying again may work" (a 503, a
 * dropped connection). `runTool` retries only errors that carry `retryable: true` — this class
 * or any error with that property — and only as often as the tool's `retry.attempts` allows,
 * always with the same idempotency key.
 *
 * @example throw new RetryableToolError('Upstream returned 503', { cause: error });
 */
export class RetryableToolError extends Error {
  readonly retryable = true as const;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RetryableToolError';
  }
}

/** True when `error` is marked retryable (`error.retryable === true`). */
export function isRetryable(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { retryable?: unknown }).retryable === true
  );
}
