import { type AuditLog, deriveEventId, type TraceEvent, verifyChain } from '../audit/index.js';
import {
  checkDirectoryChangeProof,
  type DirectoryChangeKind,
  type DirectoryChangeProof,
  type DirectoryChangeStatement,
  type ProvingKey,
} from './directory-change.js';

/** The audit thread every directory change is recorded on (hash-chained like any thread). */
export const DIRECTORY_AUDIT_THREAD = 'veridex.directory';

/**
 * Who authorised a change. `credential`: the approver whose entry changes, with a signature
 * over a {@link DirectoryChangeStatement} by a key they already held; `session`: an inbox admin's
 * signed-in session (opened with key `keyId`); `operator`: the identity a CLI operator stated.
 */
export type DirectoryAuthority =
  | { via: 'credential'; approver: string; keyId: string }
  | { via: 'session'; approver: string; keyId: string }
  | { via: 'operator'; operator: string };

/** One change to record. */
export interface DirectoryChangeInput {
  change: DirectoryChangeKind;
  approver: string;
  /** The key added or revoked (for key changes). */
  keyId?: string;
  /** Its public key (for `key_added`), so verifiers can match it to decisions. */
  publicKey?: string;
  authorisedBy: DirectoryAuthority;
  /** With `via: 'credential'`: the signed statement, the proof and the proving key. */
  proof?: { statement: DirectoryChangeStatement; proof: DirectoryChangeProof; key: ProvingKey };
  /** When the change took effect (the directory's `addedAt` / `revokedAt`). */
  at: string;
}

/**
 * Appends a directory change to the audit log (`directory_changed` on
 * {@link DIRECTORY_AUDIT_THREAD}); its event id is derived from the change, so a retried
 * append records it once. Signed material is stored verbatim, so it still verifies.
 */
export async function recordDirectoryChange(
  audit: AuditLog,
  input: DirectoryChangeInput,
): Promise<void> {
  await audit.append({
    threadId: DIRECTORY_AUDIT_THREAD,
    eventId: deriveEventId(
      DIRECTORY_AUDIT_THREAD,
      input.change,
      input.approver,
      input.keyId ?? '',
      input.at,
    ),
    type: 'directory_changed',
    payload: {
      change: input.change,
      approver: input.approver,
      at: input.at,
      authorisedBy: input.authorisedBy,
    },
    verbatim: {
      ...(input.keyId !== undefined ? { keyId: input.keyId } : {}),
      ...(input.publicKey !== undefined ? { publicKey: input.publicKey } : {}),
      ...(input.proof ? { proof: input.proof } : {}),
    },
  });
}

/** A recorded change as a verifier reads it back. */
export interface DirectoryChangeRecord {
  eventId: string;
  at: string;
  change: DirectoryChangeKind;
  approver: string;
  keyId?: string;
  authorisedBy: DirectoryAuthority;
  /** True only for a credential proof whose signature verifies over a statement matching the change. */
  proofVerified: boolean;
  /** One line: `key K added to bob at T by bob (proved with key J)`. */
  description: string;
}

/**
 * Reads the directory's audit thread back: the hash chain must hold, and each credential
 * proof must verify over a statement naming exactly this change, by a key of the approver whose
 * entry changed. Problems are reported, never thrown.
 */
export function readDirectoryChanges(events: readonly TraceEvent[]): {
  changes: DirectoryChangeRecord[];
  problems: string[];
} {
  const problems: string[] = [];
  const chain = verifyChain(events);
  if (!chain.valid) {
    problems.push(`directory change chain is broken at event ${chain.brokenAt}: ${chain.reason}`);
  }
  const changes: DirectoryChangeRecord[] = [];
  for (const event of events) {
    if (event.type !== 'directory_changed') continue;
    const record = readOne(event);
    if (typeof record === 'string') problems.push(`directory change ${event.eventId}: ${record}`);
    else changes.push(record);
  }
  return { changes, problems };
}

function readOne(event: TraceEvent): DirectoryChangeRecord | string {
  const payload = event.payload as Partial<DirectoryChangeInput>;
  const { change, approver, keyId, authorisedBy, at } = payload;
  if (
    typeof change !== 'string' ||
    typeof approver !== 'string' ||
    typeof at !== 'string' ||
    typeof authorisedBy !== 'object' ||
    authorisedBy === null
  ) {
    return 'it is not a directory change record';
  }
  let proofVerified = false;
  if (authorisedBy.via === 'credential') {
    const problem = credentialProblem(payload, authorisedBy);
    if (problem) return problem;
    proofVerified = true;
  }
  const record = {
    eventId: event.eventId,
    at,
    change,
    approver,
    ...(typeof keyId === 'string' ? { keyId } : {}),
    authorisedBy,
    proofVerified,
  };
  return { ...record, description: describeChange(record) };
}

function credentialProblem(
  payload: Partial<DirectoryChangeInput>,
  authority: { approver: string; keyId: string },
): string | undefined {
  const proof = payload.proof;
  if (!proof?.statement || !proof.proof || !proof.key)
    return 'a credential change carries no proof';
  const { statement } = proof;
  if (
    statement.change !== payload.change ||
    statement.approver !== payload.approver ||
    statement.keyId !== (payload.keyId ?? '')
  ) {
    return 'the signed statement names another change';
  }
  if (authority.approver !== payload.approver) {
    return `it was proved by "${authority.approver}", not by "${payload.approver}" whose entry changed`;
  }
  if (proof.key.keyId !== authority.keyId) return 'the proving key is not the one recorded';
  return checkDirectoryChangeProof(statement, proof.proof, proof.key);
}

/** One line describing a change, for `veridex verify --approvers` and `veridex approvers history`. */
export function describeChange(record: Omit<DirectoryChangeRecord, 'description'>): string {
  const what =
    record.change === 'key_added'
      ? `key ${record.keyId} added to ${record.approver}`
      : record.change === 'key_revoked'
        ? `key ${record.keyId} of ${record.approver} revoked`
        : record.change === 'approver_added'
          ? `approver ${record.approver} added`
          : record.change === 'entry_sealed'
            ? `${record.keyId ? `key ${record.keyId} of ` : 'approver '}${record.approver} sealed as stored`
            : `approver ${record.approver} revoked`;
  const by = record.authorisedBy;
  const who =
    by.via === 'operator'
      ? `by operator "${by.operator}" (stated identity, veridex approvers)`
      : by.via === 'session'
        ? `by ${by.approver} (inbox session opened with key ${by.keyId})`
        : `by ${by.approver} (proved with key ${by.keyId}${record.proofVerified ? '' : ', NOT verified'})`;
  return `${what} at ${record.at} ${who}`;
}

/**
 * The changes that matter for decisions signed with `keyIds`: every change of those keys, and
 * every change of the approvers holding them — their other keys too, so a key revoked and
 * replaced by someone else shows beside the decision the replacement signed.
 */
export function changesForKeys(
  changes: readonly DirectoryChangeRecord[],
  keyIds: ReadonlySet<string>,
): DirectoryChangeRecord[] {
  const holders = new Set(
    changes
      .filter((change) => change.keyId !== undefined && keyIds.has(change.keyId))
      .map((change) => change.approver),
  );
  return changes.filter(
    (change) =>
      (change.keyId !== undefined && keyIds.has(change.keyId)) || holders.has(change.approver),
  );
}
