import type { ApproverDirectory } from '../identity/index.js';
import { tryIdentityKey } from '../identity/index.js';

/** How far up a chain of sponsors is followed (admins enrolling admins enrolling keys). */
const MAX_SPONSOR_DEPTH = 16;

/**
 * Everyone a key enrolled on `sponsor`'s invitation answers to: the sponsor, and — since that
 * sponsor may hold a key another admin's invitation enrolled — every sponsor of the sponsor's
 * own keys, up the chain (README "Approvals inbox", enrolment). A decision speaks for all of
 * them, so an admin cannot count twice through an admin she enrolled herself. Over-inclusive
 * on purpose: any key of a sponsor carries its own sponsor in.
 */
export async function sponsorChain(
  directory: ApproverDirectory,
  sponsor: string | undefined,
): Promise<string[]> {
  const chain: string[] = [];
  const seen = new Set<string>();
  let frontier = sponsor === undefined ? [] : [sponsor];
  for (let depth = 0; frontier.length > 0 && depth < MAX_SPONSOR_DEPTH; depth++) {
    const next: string[] = [];
    for (const id of frontier) {
      const key = tryIdentityKey(id);
      if (key === undefined || seen.has(key)) continue;
      seen.add(key);
      chain.push(id);
      const approver = await directory.get(id);
      for (const held of approver?.keys ?? []) if (held.sponsor) next.push(held.sponsor);
    }
    frontier = next;
  }
  return chain;
}
