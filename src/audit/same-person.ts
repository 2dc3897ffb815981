import { tryIdentityKey } from '../identity/canonical-identity.js';

/**
 * The key under which the offline verifier counts people: the identity key (confusable
 * skeleton of the canonical form, Unicode TS #39) that every online rule compares by. An
 * auditor's approvers file may hold look-alike ids ("alice" and Cyrillic "аlice": sealed
 * before the directory refused them, or re-sealed by whoever holds the evidence key); they
 * are one person here, as they are to `ApprovalManager.prove`. A name that is no valid
 * identity is kept as written: folding can then only merge two names, never split one, so
 * a quorum can only shrink and a proposer only be excluded more widely.
 */
export function personKey(id: string): string {
  return tryIdentityKey(id) ?? id;
}

/**
 * The people one decision speaks for, as {@link personKey}s: its approver and, for a key an
 * inbox admin sponsored, that admin too.
 */
export function speakersOf(check: { approver: string; sponsor?: string }): string[] {
  return [check.approver, ...(check.sponsor ? [check.sponsor] : [])].map(personKey);
}
