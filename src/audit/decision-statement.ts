import { contentHash, sha256Hex } from './sha256.js';

export {
  DECISION_PAYLOAD_TYPE,
  type DecisionKind,
  type DecisionStatement,
  decisionSigningMessage,
  isSignedDecision,
  type PasskeyAssertionParts,
  type SignedDecision,
} from './decision-message.js';

/** The hash an `edit` statement carries for its replacement arguments (RFC 8785 + SHA-256). */
export function argumentsHash(args: Record<string, unknown>): string {
  return contentHash(args);
}

/**
 * The hash a statement carries for its reason (SHA-256 hex of the UTF-8 text). The text itself
 * travels beside the statement: the audit log scrubs secrets out of reasons, and a scrubbed
 * reason must not break the signature over the decision.
 */
export function reasonHash(reason: string): string {
  return sha256Hex(reason);
}
