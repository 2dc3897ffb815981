// The signed-decision statement, free of Node built-ins: the browser signer
// (`@veridex/langgraph/identity/web`) builds the same message. Hashes live in decision-statement.ts.
import { canonicalJson } from './canonical-json.js';
import { preAuthEncoding } from './dsse.js';

/** What an approver can decide. */
export type DecisionKind = 'approve' | 'reject' | 'edit';

/**
 * The statement an approver signs: exactly one decision on exactly one proposal. Every field
 * binds the signature to its context — the request (`approvalId`), what was shown
 * (`proposalHash`, `editedArgumentsHash`), why (`reasonHash`), who (`approver`), when
 * (`decidedAt`) and a fresh `nonce` — so it cannot be replayed onto another approval or
 * another version of the call. Only fixed-format fields: it is stored verbatim in the audit log.
 */
export interface DecisionStatement {
  approvalId: string;
  proposalHash: string;
  decision: DecisionKind;
  /** For `edit`: {@link argumentsHash} of the replacement arguments. */
  editedArgumentsHash?: string;
  /** {@link reasonHash} of the reason, when one is given. */
  reasonHash?: string;
  /** The approver's id as registered in the directory. */
  approver: string;
  /** ISO 8601 time of signing. */
  decidedAt: string;
  /** At least 16 random bytes, base64url; never reused for another statement on the same request. */
  nonce: string;
}

/** A decision statement with its signature, as sent in a resume payload, to the CLI or the API. */
export interface SignedDecision {
  statement: DecisionStatement;
  /** Id of the approver key that signed (`ed25519:…`, or `webauthn:…` for a passkey). */
  keyId: string;
  /**
   * Ed25519: base64 signature over {@link decisionSigningMessage} of the statement.
   * Passkey: the assertion's signature (base64url) over `webauthn` and the statement's challenge.
   */
  signature: string;
  /**
   * For a passkey: the rest of the WebAuthn assertion (base64url), made over
   * `decisionChallenge(statement)`.
   */
  webauthn?: PasskeyAssertionParts;
  /** Why; its hash is signed. Shown to the agent sanitised, kept in the audit log scrubbed. */
  reason?: string;
  /** For `edit`: the replacement arguments, whose hash the statement carries. */
  editedArgs?: Record<string, unknown>;
}

/** What a passkey-signed decision carries besides its signature (base64url, as browsers report). */
export interface PasskeyAssertionParts {
  authenticatorData: string;
  clientDataJSON: string;
}

/** DSSE payload type of a signed decision: signatures over it mean nothing anywhere else. */
export const DECISION_PAYLOAD_TYPE = 'application/vnd.veridex.decision+json';

/**
 * The bytes an approver key signs: DSSE's pre-authentication encoding of the statement's
 * RFC 8785 canonical JSON, so a decision signature can never pass as an evidence signature
 * (or anything else) and every verifier rebuilds the same bytes.
 */
export function decisionSigningMessage(statement: DecisionStatement): Uint8Array {
  return preAuthEncoding(DECISION_PAYLOAD_TYPE, new TextEncoder().encode(canonicalJson(statement)));
}

/** True for a value shaped like a {@link SignedDecision} (fields present; nothing verified). */
export function isSignedDecision(value: unknown): value is SignedDecision {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<SignedDecision>;
  return (
    typeof candidate.statement === 'object' &&
    candidate.statement !== null &&
    typeof candidate.keyId === 'string' &&
    typeof candidate.signature === 'string'
  );
}
