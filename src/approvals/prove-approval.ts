import { argumentsHash, ed25519KeyId } from '../audit/index.js';
import {
  type ApproverDirectory,
  sameIdentity,
  signatureProblem,
  tryIdentityKey,
} from '../identity/index.js';
import { mayDecideAt, speaksFor } from './apply-decision.js';
import { sponsorChain } from './sponsor-chain.js';
import type {
  ApprovalDecisionRecord,
  ApprovalRequest,
  ApprovalTier,
  IdentityMode,
} from './types.js';

/**
 * What the running process — not the database — says a request must satisfy: its tiers as the
 * configuration derives them from the live policy decision, every identity that proposed this
 * version, the proposal the call will run with, and the identity mode the manager was given.
 */
export interface ApprovalExpectation {
  proposalHash: string;
  tiers: readonly ApprovalTier[];
  proposers: readonly string[];
  identityMode: IdentityMode;
  /** How far a signed time may be off (the manager's `maxClockSkewMs`). */
  maxClockSkewMs: number;
  /**
   * The tier the hash-chained audit log recorded each decision at, by signature: it, not the
   * row's editable label, is the decision's tier.
   */
  loggedTiers?: ReadonlyMap<string, number>;
  /**
   * When the request's tiers start to close: the EARLIER of the row's `created_at` and the time
   * its hash-chained `approval_requested` event recorded (default: the row's). Tiers open from
   * the later of the two and close from the earlier, so an insider who moves either column
   * neither opens a tier early nor keeps one open late.
   */
  closesFrom?: string;
}

/** The outcome of re-proving a request from its recorded decisions. */
export type ApprovalProof =
  | {
      proven: true;
      approvers: string[];
      record?: ApprovalDecisionRecord;
      /** For an edit: the sponsors its key answers to (they are proposers of the edited call). */
      sponsors?: string[];
    }
  | { proven: false; reason: string };

/**
 * Recomputes an `approved` request's quorum from the decisions themselves (README, *Security*:
 * "execution is gated by proof"): each counted decision is re-verified — its signature, by a
 * key the directory holds for the approver it names and held when the statement was signed,
 * over a statement bound to this request's id and to the proposal about to run — and must
 * come from a distinct approver allowed at its tier who did not propose the call. Bare names
 * count only when the process itself runs the `unverified` development mode. The row's
 * `status`, `identity_mode`, `tiers` and `proposers` columns are never the authority.
 */
export async function proveQuorum(
  request: ApprovalRequest,
  expected: ApprovalExpectation,
  directory: ApproverDirectory,
): Promise<ApprovalProof> {
  if (request.proposalHash !== expected.proposalHash) {
    return { proven: false, reason: 'the request is about another proposal than the call' };
  }
  const byTier = new Map<number, { used: Set<string>; names: string[] }>();
  let refused: string | undefined;
  for (const recorded of request.decisions) {
    if (recorded.decision !== 'approve') continue;
    const record = atLoggedTier(recorded, expected);
    const checked = await checkRecord(request, record, expected, directory);
    if ('problem' in checked) {
      refused ??= `the decision by "${record.approver.slice(0, 80)}" does not count: ${checked.problem}`;
      continue;
    }
    // Distinct people: a decision speaks for its approver and its key's sponsor (directory),
    // and counts only if it shares neither with a decision already counted at the tier.
    const speakers = speaksFor({ approver: record.approver, sponsors: checked.sponsors ?? [] });
    const tier = byTier.get(record.tier) ?? { used: new Set<string>(), names: [] };
    if (speakers.some((identity) => tier.used.has(identity))) continue;
    for (const identity of speakers) tier.used.add(identity);
    tier.names.push(record.approver);
    byTier.set(record.tier, tier);
  }
  for (const [index, tier] of expected.tiers.entries()) {
    const counted = byTier.get(index)?.names ?? [];
    if (counted.length >= (tier.requiredApprovals ?? 1)) {
      return { proven: true, approvers: counted };
    }
  }
  const best = Math.max(0, ...[...byTier.values()].map((tier) => tier.names.length));
  return {
    proven: false,
    reason: `${best} verifying approval(s) by distinct allowed approvers, fewer than the configured quorum${refused ? `; ${refused}` : ''}`,
  };
}

/**
 * Re-proves the edit an `edited` request carries before its arguments are planned: the last
 * edit must verify like an approval does (signature, key, binding, tier, not a proposer), and
 * the arguments must be the ones its statement signed.
 */
export async function proveEdit(
  request: ApprovalRequest,
  expected: ApprovalExpectation,
  directory: ApproverDirectory,
): Promise<ApprovalProof> {
  const edit = request.decisions.findLast((record) => record.decision === 'edit');
  if (!edit?.editedArgs) return { proven: false, reason: 'it records no edit decision' };
  const checked = await checkRecord(request, edit, expected, directory);
  const problem = 'problem' in checked ? checked.problem : undefined;
  if (problem)
    return {
      proven: false,
      reason: `the edit by "${edit.approver.slice(0, 80)}" does not count: ${problem}`,
    };
  return {
    proven: true,
    approvers: [edit.approver],
    record: edit,
    ...('sponsors' in checked && checked.sponsors ? { sponsors: checked.sponsors } : {}),
  };
}

/** The record at the tier the audit log recorded it at (the row's label is an insider's to edit). */
function atLoggedTier(
  record: ApprovalDecisionRecord,
  expected: ApprovalExpectation,
): ApprovalDecisionRecord {
  const logged = record.signed ? expected.loggedTiers?.get(record.signed.signature) : undefined;
  return logged === undefined || logged === record.tier ? record : { ...record, tier: logged };
}

/** Why one recorded decision cannot be counted, or the sponsor of its key when it is proven. */
async function checkRecord(
  request: ApprovalRequest,
  record: ApprovalDecisionRecord,
  expected: ApprovalExpectation,
  directory: ApproverDirectory,
): Promise<{ problem: string } | { sponsors?: string[] }> {
  // One directory lookup per decision: its key's sponsors here, the key's checks below.
  const found = record.signed ? await directory.findByKey(record.signed.keyId) : undefined;
  const sponsors = await sponsorChain(directory, found?.key.sponsor);
  const proposers = [...expected.proposers, request.proposer, ...request.proposers];
  const proposing = sponsors.find((sponsor) =>
    proposers.some((proposer) => sameIdentity(proposer, sponsor)),
  );
  if (proposing !== undefined) {
    return {
      problem: `its key answers to "${proposing}" (whose invitation, or an admin enrolled by whom, enrolled it), who proposed the call`,
    };
  }
  const problem = await recordProblem(request, record, expected, directory, found);
  return problem ? { problem } : sponsors.length > 0 ? { sponsors } : {};
}

/**
 * Why one recorded decision cannot be counted, or `undefined` when it is proven. `found` is the
 * directory's entry for the signing key (looked up once by the caller).
 */
async function recordProblem(
  request: ApprovalRequest,
  record: ApprovalDecisionRecord,
  expected: ApprovalExpectation,
  directory: ApproverDirectory,
  found: Awaited<ReturnType<ApproverDirectory['findByKey']>>,
): Promise<string | undefined> {
  const approverKey = tryIdentityKey(record.approver);
  if (approverKey === undefined) return 'its approver is not a valid identity';
  const proposers = [...expected.proposers, request.proposer, ...request.proposers];
  if (proposers.some((proposer) => tryIdentityKey(proposer) === approverKey)) {
    return 'its approver proposed this version of the call';
  }
  const tier = expected.tiers[record.tier];
  if (!tier) return `tier ${record.tier} is not one of the configured tiers`;
  if (!record.signed) {
    if (expected.identityMode !== 'unverified') {
      return 'it is a bare name, and this process counts only signed decisions';
    }
    const known = await directory.get(record.approver);
    return mayDecideAt(tier, { approver: record.approver, roles: known?.roles ?? [] })
      ? undefined
      : `it may not decide at tier "${tier.name}"`;
  }
  const { statement, keyId, signature, webauthn } = record.signed;
  // A decision counts at a tier only once that tier was open: the signed time, not the row's
  // tier label, says when it was made (an escalation chain's later tier never decides early),
  // and nothing signed before the request existed counts (a backdated statement by a key
  // revoked since).
  const signedAt = Date.parse(statement.decidedAt);
  const opensAt =
    Date.parse(request.createdAt) +
    expected.tiers.slice(0, record.tier).reduce((sum, earlier) => sum + earlier.timeoutMs, 0);
  // No skew allowance here: the signed time was already allowed to run ahead when it was
  // decided, and two margins in the approver's favour would open a tier early.
  if (!(signedAt >= opensAt)) {
    return `it was signed at ${statement.decidedAt}, before tier "${tier.name}" of the request was open`;
  }
  // …and only while it was open: the running configuration's timeouts, not the row's
  // `expires_at`, say when it closed (an insider who moves the deadline keeps no tier open).
  // The signed time may run ahead of the server's by the skew the decision was allowed.
  const closesAt =
    Date.parse(expected.closesFrom ?? request.createdAt) +
    expected.tiers.slice(0, record.tier + 1).reduce((sum, each) => sum + each.timeoutMs, 0) +
    expected.maxClockSkewMs;
  if (!(signedAt <= closesAt)) {
    return `it was signed at ${statement.decidedAt}, after tier "${tier.name}" of the request had closed`;
  }
  if (statement.approvalId !== request.id) return 'it was signed for another approval';
  if (statement.proposalHash !== expected.proposalHash) return 'it was signed for another proposal';
  if (statement.decision !== record.decision) return 'it was signed for another decision';
  if (!sameIdentity(statement.approver, record.approver)) return 'it was signed by someone else';
  if (record.decision === 'edit') {
    if (!record.editedArgs || argumentsHash(record.editedArgs) !== statement.editedArgumentsHash) {
      return 'its arguments are not the ones signed';
    }
  }
  if (!found || !sameIdentity(found.approver.id, statement.approver)) {
    return `key ${keyId.slice(0, 80)} is not a key of "${statement.approver.slice(0, 80)}" in the directory`;
  }
  // The row's public key is a claim too: an Ed25519 key's id is derived from it.
  if (
    found.key.type === 'ed25519' &&
    ed25519KeyId(Buffer.from(found.key.publicKey, 'base64')) !== found.key.keyId
  ) {
    return `the directory's public key for ${keyId} is not the key that id names`;
  }
  // A revoked key (or approver) clears no call that has not run, whenever it signed: its signed
  // time is its holder's claim, and so is any audit event dated before the revocation (an
  // insider can append one). Decisions that cleared calls before it stand in their evidence.
  const revokedAt = [found.key.revokedAt, found.approver.revokedAt]
    .filter((at): at is string => at !== undefined)
    .sort((a, b) => Date.parse(a) - Date.parse(b))[0];
  if (revokedAt !== undefined) {
    return `key ${keyId} (or its approver) was revoked at ${revokedAt}; a revoked key's decisions clear no call that has not run yet`;
  }
  const problem = signatureProblem(
    {
      statement,
      signature,
      ...(webauthn
        ? {
            webauthn: {
              authenticatorData: webauthn.authenticatorData,
              clientDataJSON: webauthn.clientDataJSON,
            },
          }
        : {}),
    },
    found.key,
  );
  if (problem) return `its signature does not verify: ${problem}`;
  return mayDecideAt(tier, { approver: found.approver.id, roles: found.approver.roles })
    ? undefined
    : `"${found.approver.id}" may not decide at tier "${tier.name}"`;
}
