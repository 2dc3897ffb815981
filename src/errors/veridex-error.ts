import type { VeridexErrorCode } from './codes.js';

// A registry symbol rather than `instanceof`: two copies of this package in one
// node_modules tree (common with peer dependencies) must still recognise each other's errors.
const MARKER = Symbol.for('@veridex/langgraph/error');

/** Structured, JSON-safe facts about an error (ids, names, counts). Never a secret. */
export type ErrorDetails = Record<string, unknown>;

/** Options for {@link VeridexError}. */
export interface VeridexErrorOptions {
  /** Structured fields callers can branch on, e.g. `{ approvalId }`. */
  details?: ErrorDetails;
  /** The underlying error, kept for debugging; its message is not repeated to models. */
  cause?: unknown;
}

/**
 * The one error type the library throws on purpose. `code` is stable and closed
 * (see `ERROR_CODES`); `message` says what was expected, what arrived and what to do.
 *
 * @example
 * try { await manager.decide(id, decision) }
 * catch (error) { if (VeridexError.is(error, 'approval_expired')) { ... } }
 */
export class VeridexError extends Error {
  readonly code: VeridexErrorCode;
  readonly details: ErrorDetails;
  readonly [MARKER] = true;

  constructor(code: VeridexErrorCode, message: string, options: VeridexErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'VeridexError';
    this.code = code;
    this.details = options.details ?? {};
  }

  /**
   * True when `error` is a VeridexError (from any copy of this package), optionally with one of `codes`.
   */
  static is(error: unknown, ...codes: VeridexErrorCode[]): error is VeridexError {
    if (typeof error !== 'object' || error === null || !(MARKER in error)) return false;
    return codes.length === 0 || codes.includes((error as VeridexError).code);
  }

  /** A JSON-safe view for logs, tool messages and CLI output. */
  toJSON(): { name: string; code: VeridexErrorCode; message: string; details: ErrorDetails } {
    return { name: this.name, code: this.code, message: this.message, details: this.details };
  }
}
