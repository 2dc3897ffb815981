import { canonicalJson, type TraceEvent } from '../audit/index.js';
import { webauthnKeyId } from '../audit/webauthn-assertion.js';
import { VeridexError } from '../errors/index.js';
import {
  type Approver,
  checkDirectoryChangeProof,
  DIRECTORY_AUDIT_THREAD,
  type DirectoryChangeInput,
  type DirectoryChangeStatement,
  directoryChangeChallenge,
  isActiveKey,
  parseDirectoryChangeProof,
  sameIdentity,
} from '../identity/index.js';
import { ChallengeStore } from './challenge-store.js';
import type { InboxContext } from './inbox-context.js';
import { invitationHash } from './invitations.js';

/**
 * Whether adding a credential to `approver` needs the approver's own consent: yes as soon as
 * they hold or ever held a key — a revoked key, a key row whose seal does not verify, or a key
 * the directory history records added. Otherwise an admin could revoke (or an insider unseal or
 * delete) someone's keys and then enrol her own as theirs (README "Approvals inbox", enrolment).
 */
export async function needsConsent(
  inbox: InboxContext,
  approver: Approver,
  history = directoryHistory(inbox),
): Promise<boolean> {
  if (approver.keys.length > 0) return true;
  // The sealed keys are not the whole story: a key row whose seal an insider broke, or one he
  // deleted, was still held — its row, or the hash-chained directory history, says so.
  const { rows } = await inbox.db.query(ANY_KEY_ROW, [approver.id]);
  if (rows.length > 0) return true;
  return (await history()).some(
    (event) =>
      event.type === 'directory_changed' &&
      event.payload.change === 'key_added' &&
      typeof event.payload.approver === 'string' &&
      sameIdentity(event.payload.approver, approver.id),
  );
}

const ANY_KEY_ROW = 'SELECT 1 FROM veridex_approver_keys WHERE approver_id = $1 LIMIT 1';

/**
 * The hash-chained directory history, read once when first asked for: an enrolment asks
 * {@link needsConsent} and then {@link inboxEnrolmentRefusal}, which both read it.
 */
export function directoryHistory(inbox: InboxContext): () => Promise<readonly TraceEvent[]> {
  let read: Promise<readonly TraceEvent[]> | undefined;
  return () => {
    read ??= inbox.audit.events(DIRECTORY_AUDIT_THREAD);
    return read;
  };
}

/**
 * Why an admin's inbox invitation may not enrol `approver` without their consent, if it may not
 * (README "Approvals inbox", invitations). Without consent the link is as good as a first
 * sign-in, so it may enrol only an identity that admin brought into the directory through the
 * inbox, holding no roles: an approver the operator added (`veridex approvers invite dave --role
 * treasury`), another admin's invitee, or anyone an operator has since granted a role is enrolled
 * only through the operator's invitation — else the admin could enrol her own passkey as them and
 * decide with their roles, and lock them out of their identity.
 */
export async function inboxEnrolmentRefusal(
  inbox: InboxContext,
  approver: Approver,
  admin: string,
  history = directoryHistory(inbox),
): Promise<string | undefined> {
  if (approver.roles.length > 0) {
    return `${approver.id} holds roles an operator granted; only the operator's invitation (\`veridex approvers invite ${approver.id}\`) enrols them`;
  }
  const added = (await history()).findLast(
    (event) =>
      event.type === 'directory_changed' &&
      event.payload.change === 'approver_added' &&
      typeof event.payload.approver === 'string' &&
      sameIdentity(event.payload.approver, approver.id),
  );
  const by = added?.payload.authorisedBy as { via?: unknown; approver?: unknown } | undefined;
  const addedByAdmin =
    by?.via === 'session' && typeof by.approver === 'string' && sameIdentity(by.approver, admin);
  return addedByAdmin
    ? undefined
    : `${approver.id} was not added to the directory by your inbox invitation; the invitation that added them (the operator's \`veridex approvers invite ${approver.id}\`) enrols them`;
}

/**
 * The statement an existing approver signs to add the passkey `credentialId` through the
 * invitation `invitation`, with a fresh one-use challenge kept for exactly this enrolment.
 */
export async function issueEnrolmentStatement(
  inbox: InboxContext,
  approver: Approver,
  invitation: string,
  credentialId: unknown,
): Promise<DirectoryChangeStatement> {
  if (typeof credentialId !== 'string' || !/^[A-Za-z0-9_-]{16,1366}$/.test(credentialId)) {
    throw unproven('credentialId must be the new passkey’s base64url credential id');
  }
  const statement: DirectoryChangeStatement = {
    change: 'key_added',
    approver: approver.id,
    keyId: webauthnKeyId(credentialId),
    audience: inbox.origin,
    challenge: ChallengeStore.random(),
  };
  await inbox.challenges.issue({
    purpose: 'enrolment_proof',
    challenge: directoryChangeChallenge(statement),
    approverId: approver.id,
    details: { statement, invitation: invitationHash(invitation) },
  });
  return statement;
}

/** Checks a passkey assertion over a challenge (the service's WebAuthn check, with counters). */
export type AssertionCheck = (
  assertion: unknown,
  challenge: string,
) => Promise<{ approver: Approver; key: { keyId: string } }>;

/**
 * Checks the approver's consent to adding `newKeyId` through `invitation`: a statement this
 * service issued for exactly this enrolment (used up here), signed by an active key of the
 * same approver. Returns the audit proof of the change.
 * @throws VeridexError `enrolment_unproven` for anything missing or not verifying.
 */
export async function checkEnrolmentProof(
  inbox: InboxContext,
  input: {
    approver: Approver;
    invitation: string;
    newKeyId: string;
    proof: unknown;
    verifyAssertion: AssertionCheck;
  },
): Promise<NonNullable<DirectoryChangeInput['proof']>> {
  const { approver } = input;
  const body = input.proof as { statement?: DirectoryChangeStatement } | undefined;
  const proof = parseDirectoryChangeProof(body);
  const statement = body?.statement;
  if (!proof || typeof statement !== 'object' || statement === null) {
    throw unproven(
      `"${approver.id}" already holds a key: sign the enrolment statement (POST /api/passkeys/register/proof-challenge) with one of them`,
    );
  }
  let issued: Awaited<ReturnType<InboxContext['challenges']['consume']>>;
  try {
    issued = await inbox.challenges.consume(directoryChangeChallenge(statement), 'enrolment_proof');
  } catch {
    throw unproven('the enrolment statement is unknown, already used or expired');
  }
  const kept = issued.details as { statement?: unknown; invitation?: unknown };
  if (
    canonicalJson(kept.statement ?? null) !== canonicalJson(statement as never) ||
    kept.invitation !== invitationHash(input.invitation) ||
    statement.keyId !== input.newKeyId ||
    !sameIdentity(statement.approver, approver.id)
  ) {
    throw unproven('the signed statement is for another enrolment');
  }
  const found = await inbox.approvals.directory.findByKey(proof.keyId);
  if (!found || found.approver.id !== approver.id || !isActiveKey(found.approver, found.key)) {
    throw unproven(`key ${proof.keyId.slice(0, 80)} is not an active key of "${approver.id}"`);
  }
  const key = found.key;
  if (key.type === 'webauthn') {
    if (!proof.webauthn) throw unproven('a passkey proof needs its assertion');
    await input
      .verifyAssertion(
        {
          id: key.credentialId,
          rawId: key.credentialId,
          type: 'public-key',
          clientExtensionResults: {},
          response: { ...proof.webauthn, signature: proof.signature },
        },
        issued.challenge,
      )
      .catch((error: unknown) => {
        throw unproven(`the passkey assertion does not verify (${(error as Error).message})`);
      });
  }
  const proving = {
    type: key.type,
    keyId: key.keyId,
    publicKey: key.publicKey,
    ...(key.type === 'webauthn' ? { credentialId: key.credentialId, rpId: key.rpId } : {}),
  };
  const problem = checkDirectoryChangeProof(statement, proof, proving);
  if (problem) throw unproven(problem);
  return { statement, proof, key: proving };
}

function unproven(why: string): VeridexError {
  return new VeridexError(
    'enrolment_unproven',
    `Enrolment refused: ${why}. A credential is added to an existing approver only with their consent.`,
  );
}
