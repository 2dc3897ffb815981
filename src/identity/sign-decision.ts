import { randomBytes } from 'node:crypto';
import {
  argumentsHash,
  type DecisionKind,
  type DecisionStatement,
  decisionSigningMessage,
  reasonHash,
  type SignedDecision,
} from '../audit/decision-statement.js';
import { Ed25519Signer } from '../audit/ed25519-signer.js';
import { VeridexError } from '../errors/index.js';

/** What to decide: the request as shown (its id and proposal hash) and the decision. */
export interface SignDecisionInput {
  /**
   * What the approver reviewed: an `ApprovalRequest`, a `PendingApproval` from an interrupt or
   * `RunResult`, or just an id and proposal hash (e.g. from `veridex approvals list --json`).
   */
  request: { id: string; proposalHash: string } | { approvalId: string; proposalHash: string };
  decision: DecisionKind;
  /** The approver id the key is registered to. */
  approver: string;
  reason?: string;
  /** Required for `edit`. */
  editedArgs?: Record<string, unknown>;
  /** Default: now. */
  decidedAt?: Date;
}

/**
 * Signs one decision with an approver's Ed25519 key. The result is what an approver sends —
 * in a resume payload, to `ApprovalManager.decide`, or over the API — and what the audit log
 * and evidence keep, so anyone can check later who decided what.
 *
 * @throws VeridexError `input_invalid` for an `edit` without arguments; `signer_key_invalid`
 *   for a key that is not a 32-byte Ed25519 seed.
 * @example
 * const signed = signDecision({ request, decision: 'approve', approver: 'alice@corp' }, aliceKey);
 * await approvals.decide(request.id, signed);
 */
export function signDecision(
  input: SignDecisionInput,
  key: Uint8Array | Ed25519Signer,
): SignedDecision {
  if (input.decision === 'edit' && (typeof input.editedArgs !== 'object' || !input.editedArgs)) {
    throw new VeridexError(
      'input_invalid',
      'An edit decision needs editedArgs: the replacement arguments.',
    );
  }
  const signer = key instanceof Ed25519Signer ? key : new Ed25519Signer(key);
  const statement: DecisionStatement = {
    approvalId: 'approvalId' in input.request ? input.request.approvalId : input.request.id,
    proposalHash: input.request.proposalHash,
    decision: input.decision,
    ...(input.decision === 'edit' && input.editedArgs
      ? { editedArgumentsHash: argumentsHash(input.editedArgs) }
      : {}),
    ...(input.reason !== undefined ? { reasonHash: reasonHash(input.reason) } : {}),
    approver: input.approver,
    decidedAt: (input.decidedAt ?? new Date()).toISOString(),
    nonce: randomBytes(16).toString('base64url'),
  };
  return {
    statement,
    keyId: signer.keyId,
    signature: Buffer.from(signer.sign(decisionSigningMessage(statement))).toString('base64'),
    ...(input.reason !== undefined ? { reason: input.reason } : {}),
    ...(input.decision === 'edit' && input.editedArgs ? { editedArgs: input.editedArgs } : {}),
  };
}
