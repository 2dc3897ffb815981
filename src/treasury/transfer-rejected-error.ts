/**
 * Thrown by a {@link TransferExecutor} when the rail definitively refused a transfer and no
 * money moved (invalid account, rail-side limit, insufficient funds at the bank). The kit
 * releases the ceiling reservation and fails the call with `tool_failed`. Any other error
 * from `execute` is ambiguous — the kit then asks `lookup`, or marks the transfer in doubt.
 *
 * @example throw new TransferRejectedError('Beneficiary account closed', { code: 'AC04' });
 */
export class TransferRejectedError extends Error {
  readonly rejected = true as const;
  /** The rail's reason code, if any. */
  readonly railCode: string | undefined;

  constructor(message: string, options: { code?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TransferRejectedError';
    this.railCode = options.code;
  }

  /** True for a rejection from any copy of this package (checks the marker, not the class). */
  static is(error: unknown): error is TransferRejectedError {
    return (
      typeof error === 'object' &&
      error !== null &&
      (error as { rejected?: unknown }).rejected === true
    );
  }
}
