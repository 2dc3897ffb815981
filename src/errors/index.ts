export { ERROR_CODES, type VeridexErrorCode } from './codes.js';
export { type ErrorDetails, VeridexError, type VeridexErrorOptions } from './veridex-error.js';
