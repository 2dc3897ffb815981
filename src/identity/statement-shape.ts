import type { SignedDecision } from '../audit/decision-statement.js';
import { describeUnboundedEditedArguments } from './edited-arguments-bounds.js';

const HASH = /^[0-9a-f]{64}$/;
const NONCE = /^[A-Za-z0-9_-]{22,128}$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const STATEMENT_KEYS = new Set([
  'approvalId',
  'proposalHash',
  'decision',
  'editedArgumentsHash',
  'reasonHash',
  'approver',
  'decidedAt',
  'nonce',
]);

/** The most a signed reason may hold (characters). */
export const MAX_REASON_LENGTH = 4000;

/**
 * Why `value` is not a well-formed {@link SignedDecision}, or `undefined` when it is. Checks
 * shape only (types, formats, no unknown statement fields, edit arguments present for edits);
 * who signed and whether it verifies is decided elsewhere.
 */
export function describeMalformedSignedDecision(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return 'a signed decision must be an object';
  const { statement, keyId, signature, editedArgs, reason, webauthn } =
    value as Partial<SignedDecision>;
  if (typeof keyId !== 'string' || keyId.length > 200) return 'keyId must be a key id string';
  if (webauthn === undefined) {
    if (typeof signature !== 'string' || signature.length > 200) {
      return 'signature must be a base64 string';
    }
  } else {
    if (typeof signature !== 'string' || !BASE64URL.test(signature) || signature.length > 1024) {
      return 'a passkey signature must be a base64url string';
    }
    if (
      typeof webauthn !== 'object' ||
      webauthn === null ||
      Object.keys(webauthn).some(
        (key) => key !== 'authenticatorData' && key !== 'clientDataJSON',
      ) ||
      typeof webauthn.authenticatorData !== 'string' ||
      !BASE64URL.test(webauthn.authenticatorData) ||
      webauthn.authenticatorData.length > 4096 ||
      typeof webauthn.clientDataJSON !== 'string' ||
      !BASE64URL.test(webauthn.clientDataJSON) ||
      webauthn.clientDataJSON.length > 4096
    ) {
      return "webauthn must hold the assertion's authenticatorData and clientDataJSON (base64url)";
    }
  }
  if (typeof statement !== 'object' || statement === null || Array.isArray(statement)) {
    return 'statement must be an object';
  }
  const unknown = Object.keys(statement).find((key) => !STATEMENT_KEYS.has(key));
  if (unknown !== undefined) return `statement has an unknown field "${unknown.slice(0, 40)}"`;
  const s = statement as unknown as Record<string, unknown>;
  if (typeof s.approvalId !== 'string' || s.approvalId === '' || s.approvalId.length > 200) {
    return 'statement.approvalId must be a request id';
  }
  if (typeof s.proposalHash !== 'string' || !HASH.test(s.proposalHash)) {
    return 'statement.proposalHash must be 64 lower-case hex digits';
  }
  if (s.decision !== 'approve' && s.decision !== 'reject' && s.decision !== 'edit') {
    return 'statement.decision must be "approve", "reject" or "edit"';
  }
  if (s.decision === 'edit') {
    if (typeof s.editedArgumentsHash !== 'string' || !HASH.test(s.editedArgumentsHash)) {
      return 'an edit statement needs editedArgumentsHash (64 hex digits)';
    }
    if (typeof editedArgs !== 'object' || editedArgs === null || Array.isArray(editedArgs)) {
      return 'an edit decision needs editedArgs: the replacement arguments object';
    }
    const unbounded = describeUnboundedEditedArguments(editedArgs);
    if (unbounded !== undefined) return unbounded;
  } else if (s.editedArgumentsHash !== undefined || editedArgs !== undefined) {
    return 'only an edit decision carries edited arguments';
  }
  if (typeof s.approver !== 'string' || s.approver === '' || s.approver.length > 256) {
    return 'statement.approver must be the approver id';
  }
  if (reason !== undefined && (typeof reason !== 'string' || reason.length > MAX_REASON_LENGTH)) {
    return `reason must be a string of at most ${MAX_REASON_LENGTH} characters`;
  }
  if ((reason === undefined) !== (s.reasonHash === undefined)) {
    return 'a reason and statement.reasonHash come together';
  }
  if (
    s.reasonHash !== undefined &&
    (typeof s.reasonHash !== 'string' || !HASH.test(s.reasonHash))
  ) {
    return 'statement.reasonHash must be 64 lower-case hex digits';
  }
  if (typeof s.decidedAt !== 'string' || !isCanonicalTime(s.decidedAt)) {
    return 'statement.decidedAt must be an ISO 8601 time as Date.toISOString() writes it';
  }
  if (typeof s.nonce !== 'string' || !NONCE.test(s.nonce)) {
    return 'statement.nonce must be at least 16 random bytes in base64url';
  }
  return undefined;
}

function isCanonicalTime(text: string): boolean {
  const time = Date.parse(text);
  return Number.isFinite(time) && new Date(time).toISOString() === text;
}
