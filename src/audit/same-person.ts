import { tryIdentityKey } from '../identity/canonical-identity.js';

/** How far up a chain of sponsors is followed, as the online gate does (`sponsorChain`). */
const MAX_SPONSOR_DEPTH = 16;

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
 * Everyone a key enrolled on `sponsor`'s invitation answers to, read from the auditor's
 * approvers file: the sponsor, and every sponsor of any of the sponsor's own keys, up the
 * chain — the offline twin of the gate's `sponsorChain` (src/approvals/sponsor-chain.ts), so
 * an admin cannot count twice through an admin she enrolled herself in a re-sealed bundle
 * either. Approvers are matched by {@link personKey} (look-alike ids are one person, which can
 * only widen the chain); a cycle is followed once, and at most 16 levels.
 */
export function trustedSponsorChain(
  approvers: ReadonlyArray<{ id: string; keys: ReadonlyArray<{ sponsor?: string }> }>,
  sponsor: string | undefined,
): string[] {
  const chain: string[] = [];
  const seen = new Set<string>();
  let frontier = sponsor === undefined ? [] : [sponsor];
  for (let depth = 0; frontier.length > 0 && depth < MAX_SPONSOR_DEPTH; depth++) {
    const next: string[] = [];
    for (const id of frontier) {
      const key = personKey(id);
      if (seen.has(key)) continue;
      seen.add(key);
      chain.push(id);
      for (const approver of approvers) {
        if (personKey(approver.id) !== key) continue;
        for (const held of approver.keys) {
          if (typeof held.sponsor === 'string' && held.sponsor !== '') next.push(held.sponsor);
        }
      }
    }
    frontier = next;
  }
  return chain;
}

/**
 * The people one decision speaks for, as {@link personKey}s: its approver and, for a key an
 * inbox admin sponsored, that admin and every sponsor up her chain ({@link trustedSponsorChain}).
 */
export function speakersOf(check: {
  approver: string;
  sponsor?: string;
  sponsors?: readonly string[];
}): string[] {
  const sponsors = check.sponsors ?? (check.sponsor ? [check.sponsor] : []);
  return [...new Set([check.approver, ...sponsors].map(personKey))];
}
