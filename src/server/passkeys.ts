import { randomBytes } from 'node:crypto';
import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import {
  argumentsHash,
  type DecisionKind,
  type DecisionStatement,
  reasonHash,
  type SignedDecision,
  sha256Hex,
} from '../audit/index.js';
import {
  decisionChallenge,
  PASSKEY_ALGORITHMS,
  webauthnKeyId,
} from '../audit/webauthn-assertion.js';
import { VeridexError } from '../errors/index.js';
import {
  type Approver,
  directoryChangeChallenge,
  isActiveKey,
  MAX_REASON_LENGTH,
  recordDirectoryChange,
  sameIdentity,
  type WebAuthnApproverKey,
} from '../identity/index.js';
import { ChallengeStore } from './challenge-store.js';
import {
  checkEnrolmentProof,
  directoryHistory,
  inboxEnrolmentRefusal,
  issueEnrolmentStatement,
  needsConsent,
} from './enrolment-proof.js';
import { badInput } from './http-error.js';
import type { InboxContext } from './inbox-context.js';
import { SELECT_SIGN_COUNT, UPDATE_SIGN_COUNT } from './sql.js';

/** Passkey settings of the inbox. */
export interface PasskeyOptions {
  /** Relying party id: the host name passkeys are bound to. Default: the origin's host name. */
  rpId?: string;
  /** What authenticators show as the site's name. Default `Veridex approvals`. */
  rpName?: string;
}

/** What a passkey decision is about, as the approver chose it in the inbox. */
export interface PasskeyDecisionInput {
  decision: DecisionKind;
  reason?: string;
  editedArgs?: Record<string, unknown>;
}

/**
 * Passkeys in the inbox, with `@simplewebauthn/server`: enrolment through a one-time
 * invitation (the credential becomes a `webauthn` key of the approver in the directory),
 * sign-in, and decisions — each an assertion whose challenge is derived from the decision
 * statement the server prepared for exactly the request the approver is looking at.
 * User verification is required everywhere; origin, relying party and signature counter
 * are checked on every assertion.
 */
export class Passkeys {
  readonly #inbox: InboxContext;

  constructor(inbox: InboxContext) {
    this.#inbox = inbox;
  }

  /** Registration options for the approver an invitation is for. @throws `invitation_invalid`. */
  async registrationOptions(invitation: unknown) {
    const { approverId } = await this.#inbox.invitations.check(invitation);
    const approver = await this.#approver(approverId);
    const issued = await this.#inbox.challenges.issue({
      purpose: 'passkey_register',
      approverId: approver.id,
    });
    return generateRegistrationOptions({
      rpName: this.#inbox.rpName,
      rpID: this.#inbox.rpId,
      userName: approver.id,
      userDisplayName: approver.displayName,
      // A stable, opaque user handle: the same approver is the same WebAuthn user.
      userID: Buffer.from(sha256Hex(`veridex.approver:${approver.id}`), 'hex'),
      challenge: Buffer.from(issued.challenge, 'base64url'),
      attestationType: 'none',
      excludeCredentials: passkeysOf(approver).map((key) => ({
        id: key.credentialId,
        ...(key.transports ? { transports: key.transports } : {}),
      })),
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      supportedAlgorithmIDs: [...PASSKEY_ALGORITHMS],
    });
  }

  /**
   * The statement an approver who already holds a key signs to consent to adding the passkey
   * `credentialId` (see `enrolment-proof.ts`), and the WebAuthn options to sign it with a passkey.
   * @throws `invitation_invalid`, `enrolment_unproven`.
   */
  async proofOptions(invitation: unknown, credentialId: unknown) {
    const { approverId } = await this.#inbox.invitations.check(invitation);
    const approver = await this.#approver(approverId);
    const statement = await issueEnrolmentStatement(
      this.#inbox,
      approver,
      invitation as string,
      credentialId,
    );
    const keys = passkeysOf(approver).filter((key) => isActiveKey(approver, key));
    const options = await generateAuthenticationOptions({
      rpID: this.#inbox.rpId,
      challenge: Buffer.from(directoryChangeChallenge(statement), 'base64url'),
      userVerification: 'required',
      allowCredentials: keys.map((key) => ({
        id: key.credentialId,
        ...(key.transports ? { transports: key.transports } : {}),
      })),
    });
    return { statement, options };
  }

  /**
   * Verifies a registration and adds the passkey to the invited approver; uses the invitation.
   * An approver who holds (or held) any key must also send `proof`: the enrolment statement
   * signed by one of their active keys. The change is recorded in the audit log.
   * @throws `invitation_invalid`, `challenge_invalid`, `passkey_invalid`, `identity_ambiguous`,
   *   `enrolment_unproven`.
   */
  async register(
    invitation: unknown,
    response: unknown,
    proof?: unknown,
  ): Promise<{ approver: Approver; key: WebAuthnApproverKey }> {
    const { approverId, createdBy } = await this.#inbox.invitations.check(invitation);
    const approver = await this.#approver(approverId);
    const registration = response as RegistrationResponseJSON;
    const issued = await this.#inbox.challenges.consume(
      challengeOf(registration),
      'passkey_register',
    );
    if (issued.approverId === undefined || !sameIdentity(issued.approverId, approverId)) {
      throw passkeyInvalid('the registration was started for another approver');
    }
    const verified = await verifyRegistrationResponse({
      response: registration,
      expectedChallenge: issued.challenge,
      expectedOrigin: this.#inbox.origin,
      expectedRPID: this.#inbox.rpId,
      requireUserVerification: true,
      supportedAlgorithmIDs: [...PASSKEY_ALGORITHMS],
    }).catch((error: unknown) => {
      throw passkeyInvalid(`registration does not verify (${(error as Error).message})`);
    });
    if (!verified.verified) throw passkeyInvalid('registration does not verify');
    const { credential } = verified.registrationInfo;
    const keyId = webauthnKeyId(credential.id);
    const history = directoryHistory(this.#inbox);
    const consent = (await needsConsent(this.#inbox, approver, history))
      ? await checkEnrolmentProof(this.#inbox, {
          approver,
          invitation: invitation as string,
          newKeyId: keyId,
          proof,
          verifyAssertion: (assertion, challenge) =>
            this.verifyAssertion(assertion as AuthenticationResponseJSON, challenge),
        })
      : undefined;
    if (!consent && createdBy.via === 'session') {
      // Checked again here: roles granted, or the approver re-added, since the link was issued.
      const refusal = await inboxEnrolmentRefusal(
        this.#inbox,
        approver,
        createdBy.approver,
        history,
      );
      if (refusal) throw new VeridexError('enrolment_unproven', refusal);
    }
    const algorithm = registration.response.publicKeyAlgorithm;
    await this.#inbox.invitations.consume(invitation);
    // Unproven by the approver, through an admin's invitation: whoever opened the link may be
    // that admin, so the key speaks for her too (never one quorum with her own decisions). A key
    // proven by a sponsored key inherits its sponsor: whoever holds one holds the other.
    const sponsor = consent
      ? (await this.#inbox.approvals.directory.findByKey(consent.key.keyId))?.key.sponsor
      : createdBy.via === 'session'
        ? createdBy.approver
        : undefined;
    const updated = await this.#inbox.approvals.directory.addKey(
      approverId,
      {
        type: 'webauthn',
        publicKey: credential.publicKey,
        credentialId: credential.id,
        rpId: this.#inbox.rpId,
        // The one origin its decisions count from: the inbox's (checked by the registration
        // above, and by every decision's assertion, in the service, the manager and the verifier).
        origins: [this.#inbox.origin],
        algorithm: typeof algorithm === 'number' ? algorithm : -7,
        ...(credential.transports ? { transports: credential.transports } : {}),
      },
      sponsor ? { sponsor } : {},
    );
    const key = updated.keys.find((candidate) => candidate.keyId === keyId) as WebAuthnApproverKey;
    await recordDirectoryChange(this.#inbox.audit, {
      change: 'key_added',
      approver: updated.id,
      keyId,
      publicKey: key.publicKey,
      at: key.addedAt,
      ...(consent
        ? {
            authorisedBy: { via: 'credential', approver: updated.id, keyId: consent.key.keyId },
            proof: consent,
          }
        : { authorisedBy: createdBy }),
    });
    return { approver: updated, key };
  }

  /** Options for signing in with any passkey registered here (discoverable credentials). */
  async loginOptions() {
    const issued = await this.#inbox.challenges.issue({ purpose: 'passkey_login' });
    return generateAuthenticationOptions({
      rpID: this.#inbox.rpId,
      challenge: Buffer.from(issued.challenge, 'base64url'),
      userVerification: 'required',
    });
  }

  /** Verifies a sign-in assertion. @throws `challenge_invalid`, `passkey_invalid`. */
  async login(response: unknown): Promise<{ approver: Approver; key: WebAuthnApproverKey }> {
    const assertion = response as AuthenticationResponseJSON;
    const issued = await this.#inbox.challenges.consume(challengeOf(assertion), 'passkey_login');
    return this.verifyAssertion(assertion, issued.challenge);
  }

  /**
   * Prepares the statement an approver's passkey will sign for a decision on `approvalId`: the
   * request's current proposal hash, the decision, the hashes of the edit and the reason, the
   * approver, the time and a fresh nonce. The challenge is derived from it and kept (one use).
   * @throws `proposal_tampered` when the stored proposal is not bound to its hash.
   */
  async decisionOptions(approver: Approver, approvalId: string, input: PasskeyDecisionInput) {
    const request = await this.#inbox.approvals.require(approvalId);
    // Only a request whose shown proposal is the hashed one is signed here (`proposal_tampered`).
    await this.#inbox.approvals.requireShownProposal(request);
    const keys = passkeysOf(approver).filter((key) => isActiveKey(approver, key));
    if (keys.length === 0) {
      throw passkeyInvalid(`"${approver.id}" has no passkey registered here; enrol one first`);
    }
    const decision = input.decision;
    if (decision !== 'approve' && decision !== 'reject' && decision !== 'edit') {
      throw badInput('decision must be approve, reject or edit');
    }
    if (
      input.reason !== undefined &&
      (typeof input.reason !== 'string' || input.reason.length > MAX_REASON_LENGTH)
    ) {
      throw badInput(`reason must be text of at most ${MAX_REASON_LENGTH} characters`);
    }
    const edited = input.editedArgs;
    if (
      decision === 'edit' &&
      (typeof edited !== 'object' || edited === null || Array.isArray(edited))
    ) {
      throw badInput('an edit needs editedArgs: the replacement arguments object');
    }
    const statement: DecisionStatement = {
      approvalId: request.id,
      proposalHash: request.proposalHash,
      decision,
      ...(decision === 'edit' && edited ? { editedArgumentsHash: argumentsHash(edited) } : {}),
      ...(input.reason !== undefined ? { reasonHash: reasonHash(input.reason) } : {}),
      approver: approver.id,
      decidedAt: this.#inbox.now().toISOString(),
      nonce: randomBytes(16).toString('base64url'),
    };
    const challenge = decisionChallenge(statement);
    await this.#inbox.challenges.issue({
      purpose: 'passkey_decision',
      challenge,
      approverId: approver.id,
      approvalId: request.id,
    });
    const options = await generateAuthenticationOptions({
      rpID: this.#inbox.rpId,
      challenge: Buffer.from(challenge, 'base64url'),
      userVerification: 'required',
      allowCredentials: keys.map((key) => ({
        id: key.credentialId,
        ...(key.transports ? { transports: key.transports } : {}),
      })),
    });
    return { statement, challenge, options };
  }

  /**
   * Checks a passkey-signed decision as only the service can: its challenge is one this service
   * issued for this approver and this request and was not used before, and the assertion
   * verifies for this origin and relying party with a counter that moved forward. The
   * ApprovalManager then re-checks the signature (as every verifier does offline) and the rules.
   * @throws `challenge_invalid`, `passkey_invalid`, `decision_mismatch`.
   */
  async checkDecision(
    approver: Approver,
    approvalId: string,
    signed: SignedDecision,
  ): Promise<void> {
    const issued = await this.#inbox.challenges.consume(
      decisionChallenge(signed.statement),
      'passkey_decision',
    );
    if (issued.approvalId !== approvalId || !sameIdentity(issued.approverId, approver.id)) {
      throw new VeridexError(
        'decision_mismatch',
        'This passkey challenge was issued for another approval or another approver.',
      );
    }
    const webauthn = signed.webauthn!;
    const found = await this.#inbox.approvals.directory.findByKey(signed.keyId);
    if (found?.key.type !== 'webauthn')
      throw passkeyInvalid(`key ${signed.keyId.slice(0, 80)} is not a passkey here`);
    await this.verifyAssertion(
      {
        id: found.key.credentialId,
        rawId: found.key.credentialId,
        type: 'public-key',
        clientExtensionResults: {},
        response: {
          authenticatorData: webauthn.authenticatorData,
          clientDataJSON: webauthn.clientDataJSON,
          signature: signed.signature,
        },
      },
      issued.challenge,
    );
  }

  /**
   * Verifies an assertion of an active passkey over `challenge` for this origin and relying
   * party, user verified, with a counter that moved forward. @throws `passkey_invalid`.
   */
  async verifyAssertion(
    assertion: AuthenticationResponseJSON,
    challenge: string,
  ): Promise<{ approver: Approver; key: WebAuthnApproverKey }> {
    if (typeof assertion?.id !== 'string' || !/^[A-Za-z0-9_-]{16,1366}$/.test(assertion.id)) {
      throw passkeyInvalid('the assertion names no credential');
    }
    const found = await this.#inbox.approvals.directory.findByKey(webauthnKeyId(assertion.id));
    if (found?.key.type !== 'webauthn' || !isActiveKey(found.approver, found.key)) {
      throw passkeyInvalid('this passkey is not registered here (or was revoked)');
    }
    const key = found.key;
    const { rows } = await this.#inbox.db.query<{ sign_count: string }>(SELECT_SIGN_COUNT, [
      key.keyId,
    ]);
    const counter = Number(rows[0]?.sign_count ?? 0);
    const verified = await verifyAuthenticationResponse({
      response: assertion,
      expectedChallenge: challenge,
      expectedOrigin: this.#inbox.origin,
      expectedRPID: this.#inbox.rpId,
      credential: {
        id: key.credentialId,
        publicKey: new Uint8Array(Buffer.from(key.publicKey, 'base64')),
        counter,
      },
      requireUserVerification: true,
    }).catch((error: unknown) => {
      throw passkeyInvalid(`the assertion does not verify (${(error as Error).message})`);
    });
    if (!verified.verified) throw passkeyInvalid('the assertion does not verify');
    await this.#inbox.db.query(UPDATE_SIGN_COUNT, [
      key.keyId,
      verified.authenticationInfo.newCounter,
    ]);
    return { approver: found.approver, key };
  }

  async #approver(id: string): Promise<Approver> {
    const approver = await this.#inbox.approvals.directory.get(id);
    if (!approver || approver.revokedAt !== undefined) {
      throw new VeridexError(
        'invitation_invalid',
        `Approver "${id}" is not (or no longer) in the directory.`,
      );
    }
    return approver;
  }
}

/** The approver's passkeys. */
export function passkeysOf(approver: Approver): WebAuthnApproverKey[] {
  return approver.keys.filter((key): key is WebAuthnApproverKey => key.type === 'webauthn');
}

/** The challenge a browser response was made over (from its client data). */
function challengeOf(response: { response?: { clientDataJSON?: unknown } } | undefined): string {
  const text = response?.response?.clientDataJSON;
  if (typeof text !== 'string' || text.length > 16_384) throw passkeyInvalid('no client data');
  try {
    const challenge = (
      JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as { challenge?: unknown }
    ).challenge;
    if (typeof challenge === 'string') return challenge;
  } catch {}
  throw passkeyInvalid('the client data names no challenge');
}

function passkeyInvalid(why: string): VeridexError {
  return new VeridexError('passkey_invalid', `Passkey refused: ${why}.`);
}

/** Re-exported for the routes: the random challenge generator. */
export const randomChallenge = ChallengeStore.random;
