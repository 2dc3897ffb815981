import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { VeridexError, type VeridexErrorCode } from '../errors/index.js';

// Each refusal's HTTP status. Codes not listed are server faults (500).
const STATUS: Partial<Record<VeridexErrorCode, ContentfulStatusCode>> = {
  input_invalid: 400,
  resume_payload_invalid: 400,
  identity_invalid: 400,
  config_invalid: 400,
  auth_required: 401,
  login_invalid: 401,
  passkey_invalid: 401,
  csrf_rejected: 403,
  host_not_allowed: 403,
  admin_required: 403,
  session_mismatch: 403,
  enrolment_unproven: 403,
  invitation_not_allowed: 403,
  decision_unsigned: 403,
  decision_key_unknown: 403,
  decision_signature_invalid: 403,
  approver_unknown: 403,
  approver_not_allowed: 403,
  proposer_cannot_approve: 403,
  identity_ambiguous: 409,
  approval_not_found: 404,
  thread_not_found: 404,
  approval_already_decided: 409,
  approver_duplicate: 409,
  decision_mismatch: 409,
  decision_nonce_reused: 409,
  decision_stale: 409,
  challenge_invalid: 409,
  proposal_tampered: 409,
  invitation_invalid: 410,
  approval_expired: 410,
  input_too_large: 413,
};

/** The HTTP status the service answers a VeridexError code with. */
export function statusFor(code: VeridexErrorCode): ContentfulStatusCode {
  return STATUS[code] ?? 500;
}

/** The JSON body of every error answer: `{ error: { code, message } }`. */
export interface ErrorBody {
  error: { code: string; message: string };
}

/**
 * Answers an error: a VeridexError with its code, message and status; a client error Hono's
 * own middleware raised (an `HTTPException` below 500, e.g. a body over the limit) with its
 * status — 413 as `input_too_large`, anything else as `input_invalid` —; anything else as a
 * generic 500 whose message reveals nothing about the server.
 */
export function errorResponse(c: Context, error: unknown): Response {
  if (error instanceof HTTPException && error.status >= 400 && error.status < 500) {
    const tooLarge = error.status === 413;
    return c.json<ErrorBody>(
      {
        error: tooLarge
          ? { code: 'input_too_large', message: 'The request body is larger than allowed.' }
          : { code: 'input_invalid', message: 'The request was refused as malformed.' },
      },
      error.status as ContentfulStatusCode,
    );
  }
  if (VeridexError.is(error)) {
    const status = statusFor(error.code);
    if (status < 500 || error.code === 'db_unavailable') {
      return c.json<ErrorBody>(
        { error: { code: error.code, message: error.message } },
        status === 500 ? 503 : status,
      );
    }
  }
  return c.json<ErrorBody>(
    { error: { code: 'internal_error', message: 'The server failed; see its log.' } },
    500,
  );
}

/** A VeridexError `input_invalid` for a bad request field. */
export function badInput(message: string): VeridexError {
  return new VeridexError('input_invalid', message);
}
