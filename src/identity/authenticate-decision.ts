import {
  argumentsHash,
  decisionSigningMessage,
  reasonHash,
  type SignedDecision,
} from '../audit/decision-statement.js';
import { ed25519KeyId } from '../audit/ed25519-signer.js';
import { verifyEd25519 } from '../audit/ed25519-verify.js';
import { checkWebAuthnAssertion, decisionChallenge } from '../audit/webauthn-assertion.js';
import { VeridexError, type VeridexErrorCode } from '../errors/index.js';
import { type Approver, type ApproverKey, isActiveKey } from './approver.js';
import type { ApproverDirectory } from './approver-directory.js';
import { sameIdentity } from './canonical-identity.js';
import { describeMalformedSignedDecision } from './statement-shape.js';

/** A signed decision whose signature, key and attachments check out against the directory. */
export interface AuthenticatedDecision {
  signed: SignedDecision;
  approver: Approver;
  key: ApproverKey;
}

/**
 * Checks who signed a decision, before it is applied to any request: well-formed
 * (`resume_payload_invalid`), signed by a key the directory has (`decision_key_unknown`), that
 * key belonging to the approver the statement names — bob's name with alice's key is refused —
 * and neither revoked (`approver_unknown`, `decision_key_unknown`), a valid Ed25519 signature
 * over the statement (`decision_signature_invalid`), and reason and edited arguments matching
 * their signed hashes (`decision_mismatch`). Whether the statement fits the request (id,
 * proposal hash, nonce, time) is checked under the request's lock by the ApprovalManager.
 *
 * @throws VeridexError with one of the codes above; nothing is recorded.
 */
export async function authenticateDecision(
  value: unknown,
  directory: ApproverDirectory,
): Promise<AuthenticatedDecision> {
  const malformed = describeMalformedSignedDecision(value);
  if (malformed)
    throw refusal('resume_payload_invalid', `Malformed signed decision: ${malformed}.`);
  const signed = value as SignedDecision;
  const { statement } = signed;
  const found = await directory.findByKey(signed.keyId);
  if (!found) {
    throw refusal(
      'decision_key_unknown',
      `Key ${signed.keyId.slice(0, 80)} is not registered to any approver; the decision was not counted.`,
    );
  }
  const { approver, key } = found;
  // A directory row is a claim: an Ed25519 key id is derived from its public key, so a row whose
  // key was swapped under a kept id names no key at all.
  if (key.type === 'ed25519' && ed25519KeyId(Buffer.from(key.publicKey, 'base64')) !== key.keyId) {
    throw refusal(
      'decision_key_unknown',
      `The directory's public key for ${key.keyId} is not the key that id names; the decision was not counted.`,
    );
  }
  if (!sameIdentity(statement.approver, approver.id)) {
    throw refusal(
      'decision_key_unknown',
      `Key ${key.keyId} belongs to "${approver.id}", not to "${statement.approver.slice(0, 80)}"; a decision counts only when signed with the approver's own key.`,
    );
  }
  if (!isActiveKey(approver, key)) {
    throw refusal(
      approver.revokedAt ? 'approver_unknown' : 'decision_key_unknown',
      approver.revokedAt
        ? `Approver "${approver.id}" was revoked at ${approver.revokedAt}; their decisions no longer count.`
        : `Key ${key.keyId} of "${approver.id}" was revoked at ${key.revokedAt}; sign with a current key.`,
    );
  }
  const problem = signatureProblem(signed, key);
  if (problem !== undefined) {
    throw refusal(
      'decision_signature_invalid',
      `The signature by ${key.keyId} does not verify over this decision statement: ${problem}.`,
    );
  }
  if (signed.reason !== undefined && reasonHash(signed.reason) !== statement.reasonHash) {
    throw refusal('decision_mismatch', 'The reason is not the one the approver signed.');
  }
  if (signed.editedArgs && argumentsHash(signed.editedArgs) !== statement.editedArgumentsHash) {
    throw refusal(
      'decision_mismatch',
      'The edited arguments are not the ones the approver signed.',
    );
  }
  return { signed, approver, key };
}

/**
 * Why the decision's signature does not verify under `key`, or `undefined` when it does: an
 * Ed25519 signature over the statement, or a passkey assertion over its challenge for the
 * key's relying party, made on one of the origins sealed with the key (not in a frame). Shared by the check of a decision as it arrives and the re-check of a
 * stored one before the call it approves runs (`ApprovalManager.prove`).
 */
export function signatureProblem(
  signed: Pick<SignedDecision, 'statement' | 'signature' | 'webauthn'>,
  key: ApproverKey,
): string | undefined {
  if (key.type === 'ed25519') {
    if (signed.webauthn !== undefined) return 'an Ed25519 key signs no passkey assertion';
    return verifyEd25519(key.publicKey, decisionSigningMessage(signed.statement), signed.signature)
      ? undefined
      : 'it was changed, or signed over something else';
  }
  if (signed.webauthn === undefined) return 'a passkey decision needs its WebAuthn assertion';
  // Fail closed for a passkey sealed without origins (enrolled before they were recorded): its
  // assertions could come from any page of its host. Enrolling it again records the inbox's.
  if (key.origins === undefined || key.origins.length === 0) {
    return 'the passkey records no origin it may decide on (it was enrolled before origins were recorded): enrol it again in the inbox';
  }
  const check = checkWebAuthnAssertion(
    { ...signed.webauthn, signature: signed.signature },
    {
      publicKey: key.publicKey,
      rpId: key.rpId,
      challenge: decisionChallenge(signed.statement),
      origins: key.origins,
    },
  );
  return check.ok ? undefined : check.problem;
}

function refusal(code: VeridexErrorCode, message: string): VeridexError {
  return new VeridexError(code, message);
}
