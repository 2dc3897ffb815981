import type { DecisionStatement } from './decision-statement.js';
import { decisionSigningMessage, reasonHash } from './decision-statement.js';
import { ed25519KeyId } from './ed25519-signer.js';
import { verifyEd25519 } from './ed25519-verify.js';
import { personKey, speakersOf, trustedSponsorChain } from './same-person.js';
import { contentHash } from './sha256.js';
import type { TraceEvent } from './trace-event.js';
import { checkWebAuthnAssertion, decisionChallenge, webauthnKeyId } from './webauthn-assertion.js';

/**
 * An approver as an auditor trusts them: the public part of the approver directory
 * (`veridex approvers export`). A decision's key is looked up under the exact id its event
 * records (the directory's canonical id; the signed statement may spell it otherwise, `ALICE`,
 * as the gate accepts, but must have the same identity key); people are counted by identity key
 * (`personKey`), so look-alike ids are one person.
 */
export interface TrustedApprover {
  id: string;
  displayName?: string;
  keys: ReadonlyArray<{
    keyId: string;
    publicKey: string;
    type: string;
    revokedAt?: string;
    /** For passkeys: the relying party the credential belongs to. */
    rpId?: string;
    /** For passkeys: the web origins its decisions count from (the inbox's, sealed at enrolment). */
    origins?: readonly string[];
    /** The inbox admin whose invitation enrolled the key unproven: the decision speaks for them too. */
    sponsor?: string;
  }>;
  revokedAt?: string;
}

/** How one recorded approval decision fared. */
export interface DecisionCheck {
  approvalId: string;
  eventId: string;
  approver: string;
  approverName?: string;
  decision: string;
  /** The escalation tier the decision was counted at. */
  tier?: number;
  proposalHash?: string;
  toolName?: string;
  keyId?: string;
  /** How the decision was signed: an Ed25519 approver key, or a passkey (WebAuthn assertion). */
  method?: 'ed25519' | 'webauthn';
  /** For a passkey decision: the web origin the browser reported the approver was on. */
  origin?: string;
  /**
   * `valid`: the signature verifies over a statement that matches the event (and, with
   * `approvers`, the key is the named approver's); `invalid`: it does not; `unverified`: a
   * bare decision taken in the explicit development mode.
   */
  status: 'valid' | 'invalid' | 'unverified';
  /** True when the signing key was found under this approver in the trusted directory. */
  keyTrusted: boolean;
  /** The trusted key's sponsor (see `TrustedApprover`): never one quorum with the sponsor's own decision. */
  sponsor?: string;
  /**
   * The whole chain of sponsors above the key (its sponsor, the sponsors of that sponsor's
   * keys, …) in the trusted approvers: the decision speaks for every one of them.
   */
  sponsors?: string[];
  /** Whether the reason shown is the one signed (false also when the log redacted a secret from it). */
  reasonVerified?: boolean;
  problem?: string;
}

interface DecidedPayload {
  approvalId?: unknown;
  approver?: unknown;
  approverName?: unknown;
  decision?: unknown;
  tier?: unknown;
  proposalHash?: unknown;
  verified?: unknown;
  reason?: unknown;
  editedArgs?: unknown;
  signed?: {
    statement?: DecisionStatement;
    keyId?: unknown;
    signature?: unknown;
    publicKey?: unknown;
    webauthn?: {
      authenticatorData?: unknown;
      clientDataJSON?: unknown;
      credentialId?: unknown;
      rpId?: unknown;
      origins?: unknown;
    };
  };
}

/**
 * Checks every `approval_decided` event of a sealed thread offline: each signed decision's
 * Ed25519 signature over its statement, the statement against the event (approval, approver,
 * decision, proposal hash — also against the `approval_requested` event), the signing key
 * against `approvers` when given, and every `approved` resolution against its quorum of
 * counted decisions by distinct approvers who did not propose the call. Returns one check per
 * decision and the problems that make the evidence invalid.
 */
export function checkDecisions(
  events: readonly TraceEvent[],
  approvers?: readonly TrustedApprover[],
  options: { allowUnverified?: boolean } = {},
): { checks: DecisionCheck[]; problems: string[] } {
  const requested = new Map<string, Record<string, unknown>>();
  for (const event of events) {
    if (event.type === 'approval_requested') {
      requested.set(String(event.payload.approvalId), event.payload);
    }
  }
  const checks: DecisionCheck[] = [];
  const problems: string[] = [];
  for (const event of events) {
    if (event.type !== 'approval_decided') continue;
    const check = checkOne(event, requested, approvers);
    checks.push(check);
    if (check.status === 'invalid') {
      problems.push(
        `decision by "${check.approver}" on approval ${check.approvalId} does not verify: ${check.problem}`,
      );
    }
  }
  for (const event of events) {
    if (event.type !== 'approval_resolved' || event.payload.status !== 'approved') continue;
    const problem = quorumProblem(event, requested, checks, options.allowUnverified === true);
    if (problem) problems.push(problem);
  }
  return { checks, problems };
}

function checkOne(
  event: TraceEvent,
  requested: ReadonlyMap<string, Record<string, unknown>>,
  approvers: readonly TrustedApprover[] | undefined,
): DecisionCheck {
  const payload = event.payload as DecidedPayload;
  const approvalId = String(payload.approvalId);
  const request = requested.get(approvalId);
  const base = {
    approvalId,
    eventId: event.eventId,
    approver: String(payload.approver),
    ...(typeof payload.approverName === 'string' ? { approverName: payload.approverName } : {}),
    decision: String(payload.decision),
    ...(typeof payload.tier === 'number' ? { tier: payload.tier } : {}),
    ...(typeof request?.proposalHash === 'string' ? { proposalHash: request.proposalHash } : {}),
    ...(typeof request?.toolName === 'string' ? { toolName: request.toolName } : {}),
    keyTrusted: false,
  };
  if (payload.verified !== true) return { ...base, status: 'unverified' };
  const signed = payload.signed;
  const statement = signed?.statement;
  const invalid = (problem: string): DecisionCheck => ({
    ...base,
    ...(typeof signed?.keyId === 'string' ? { keyId: signed.keyId } : {}),
    status: 'invalid',
    problem,
  });
  if (
    typeof statement !== 'object' ||
    statement === null ||
    typeof signed?.keyId !== 'string' ||
    typeof signed.signature !== 'string' ||
    typeof signed.publicKey !== 'string'
  ) {
    return invalid('it is marked verified but carries no signed statement');
  }
  const { keyId, signature, publicKey } = signed;
  if (statement.approvalId !== approvalId) return invalid('the statement names another approval');
  // The event records the directory's canonical id; the statement may spell it as its signer
  // typed it (`ALICE`), which the gate accepts as the same identity (`sameIdentity`). Compare as
  // the gate does, and look the key up under the event's id only, so no other approver's key
  // can ever vouch for it.
  if (personKey(statement.approver) !== personKey(base.approver)) {
    return invalid('the statement names another approver');
  }
  if (statement.decision !== base.decision) return invalid('the statement says another decision');
  if (payload.proposalHash !== undefined && statement.proposalHash !== payload.proposalHash) {
    return invalid('the statement is about another proposal than the event');
  }
  if (request && statement.proposalHash !== request.proposalHash) {
    return invalid('the statement is about another proposal than the one requested');
  }
  if (statement.editedArgumentsHash !== undefined) {
    if (
      typeof payload.editedArgs !== 'object' ||
      payload.editedArgs === null ||
      contentHash(payload.editedArgs) !== statement.editedArgumentsHash
    ) {
      return invalid('the edited arguments are not the ones signed');
    }
  }
  const trustedKey = (approvers ?? [])
    .find((candidate) => candidate.id === base.approver)
    ?.keys.find((candidate) => candidate.keyId === keyId && candidate.publicKey === publicKey);
  let origin: string | undefined;
  if (signed.webauthn !== undefined) {
    const { authenticatorData, clientDataJSON, credentialId, rpId } = signed.webauthn;
    if (
      typeof authenticatorData !== 'string' ||
      typeof clientDataJSON !== 'string' ||
      typeof credentialId !== 'string' ||
      typeof rpId !== 'string'
    ) {
      return invalid('the passkey assertion is incomplete');
    }
    if (webauthnKeyId(credentialId) !== keyId) {
      return invalid(`the credential does not match key id ${keyId}`);
    }
    if (trustedKey?.rpId !== undefined && trustedKey.rpId !== rpId) {
      return invalid(`the passkey belongs to ${trustedKey.rpId}, not ${rpId}`);
    }
    // The origins the decision must come from: the trusted approvers file's for the key when the
    // auditor gives one, else those the bundle recorded with the decision (which count only with
    // --trust-bundle-keys). None recorded fails closed, as the gate does.
    const origins = approvers
      ? trustedKey?.origins
      : Array.isArray(signed.webauthn.origins) &&
          signed.webauthn.origins.every((origin) => typeof origin === 'string')
        ? (signed.webauthn.origins as string[])
        : undefined;
    if (trustedKey !== undefined || !approvers) {
      if (origins === undefined || origins.length === 0) {
        return invalid(
          `passkey ${keyId} records no origin it may decide on (enrolled before origins were recorded)`,
        );
      }
    }
    const check = checkWebAuthnAssertion(
      { authenticatorData, clientDataJSON, signature },
      {
        publicKey,
        rpId,
        challenge: decisionChallenge(statement),
        ...(origins !== undefined ? { origins } : {}),
      },
    );
    if (!check.ok)
      return invalid(`the passkey assertion by ${keyId} does not verify: ${check.problem}`);
    origin = check.origin;
  } else {
    let buffer: Buffer;
    try {
      buffer = Buffer.from(publicKey, 'base64');
    } catch {
      return invalid('the public key is not base64');
    }
    if (buffer.length !== 32 || ed25519KeyId(buffer) !== keyId) {
      return invalid(`the public key does not match key id ${keyId}`);
    }
    if (!verifyEd25519(publicKey, decisionSigningMessage(statement), signature)) {
      return invalid(`the signature by ${keyId} does not verify`);
    }
  }
  let keyTrusted = false;
  let sponsor: string | undefined;
  let sponsors: string[] = [];
  if (approvers) {
    const approver = approvers.find((candidate) => candidate.id === base.approver);
    const key = approver?.keys.find(
      (candidate) => candidate.keyId === keyId && candidate.publicKey === publicKey,
    );
    if (!approver || !key) {
      return invalid(`key ${keyId} is not a key of "${base.approver}" in the trusted approvers`);
    }
    const revokedAt = earliestRevocation(key.revokedAt, approver.revokedAt);
    if (revokedAt !== undefined && !(Date.parse(event.timestamp) < revokedAt.time)) {
      return invalid(
        `key ${keyId} was revoked at ${revokedAt.at}${approver.revokedAt === revokedAt.at ? ` (its approver "${approver.id}")` : ''}, before the decision was counted`,
      );
    }
    keyTrusted = true;
    sponsor = typeof key.sponsor === 'string' ? key.sponsor : undefined;
    sponsors = trustedSponsorChain(approvers, sponsor);
  }
  return {
    ...base,
    keyId,
    ...(sponsor ? { sponsor } : {}),
    ...(sponsors.length > 0 ? { sponsors } : {}),
    method: signed.webauthn !== undefined ? 'webauthn' : 'ed25519',
    ...(origin !== undefined ? { origin } : {}),
    status: 'valid',
    keyTrusted,
    ...(statement.reasonHash !== undefined
      ? {
          reasonVerified:
            typeof payload.reason === 'string' &&
            reasonHash(payload.reason) === statement.reasonHash,
        }
      : {}),
  };
}

/**
 * The earlier of a key's and its approver's revocation: revoking the approver revokes every
 * key, whenever each key row was tidied up. A time that does not parse is a revocation at an
 * unknown moment, so nothing counts after it (`time` is -Infinity).
 */
function earliestRevocation(
  ...times: ReadonlyArray<string | undefined>
): { at: string; time: number } | undefined {
  let earliest: { at: string; time: number } | undefined;
  for (const at of times) {
    if (at === undefined) continue;
    const parsed = Date.parse(at);
    const time = Number.isNaN(parsed) ? Number.NEGATIVE_INFINITY : parsed;
    if (earliest === undefined || time < earliest.time) earliest = { at, time };
  }
  return earliest;
}

function quorumProblem(
  resolved: TraceEvent,
  requested: ReadonlyMap<string, Record<string, unknown>>,
  checks: readonly DecisionCheck[],
  allowUnverified: boolean,
): string | undefined {
  const approvalId = String(resolved.payload.approvalId);
  // The mode is the one recorded when the request was opened, in the hash-chained log: a bare
  // name counts only on a request opened in the development mode, and only when the verifier
  // accepts that mode by name.
  const openedUnverified = requested.get(approvalId)?.identityMode === 'unverified';
  if (openedUnverified && !allowUnverified) {
    return `approval ${approvalId} was approved in the unverified development mode (bare names); pass --allow-unverified (allowUnverified) to accept such a bundle`;
  }
  const required = Number(
    resolved.payload.requiredApprovals ?? requested.get(approvalId)?.requiredApprovals ?? 1,
  );
  const tier = resolved.payload.tier;
  // People, not spellings: look-alike ids and a key's sponsor are compared by identity key.
  const proposers = new Set(
    (requested.get(approvalId)?.proposers as unknown[] | undefined)?.map((proposer) =>
      personKey(String(proposer)),
    ) ?? [],
  );
  const used = new Set<string>();
  let counted = 0;
  for (const check of checks) {
    if (
      check.approvalId !== approvalId ||
      check.decision !== 'approve' ||
      !(check.status === 'valid' || (check.status === 'unverified' && openedUnverified)) ||
      (typeof tier === 'number' && check.tier !== tier)
    ) {
      continue;
    }
    const speakers = speakersOf(check);
    if (speakers.some((speaker) => proposers.has(speaker) || used.has(speaker))) continue;
    for (const speaker of speakers) used.add(speaker);
    counted += 1;
  }
  if (counted >= required) return undefined;
  return `approval ${approvalId} is recorded as approved with ${counted} counted approval(s) by distinct non-proposers, ${required} required`;
}
