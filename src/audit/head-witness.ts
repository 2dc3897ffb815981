import { VeridexError } from '../errors/index.js';
import { inconsistency } from './log-consistency.js';
import { verifyConsistency } from './merkle-proofs.js';
import type { MerkleTree } from './merkle-tree.js';
import type { EvidenceVerifier } from './signer.js';
import { checkTreeHead, describeHead, headLog, type SignedTreeHead } from './tree-head.js';

/**
 * Somewhere tree heads are published that the database writer cannot rewrite: a file shipped
 * off the host, another organisation, an object store with a retention lock, a public
 * transparency log. A witness keeps, per log (`headLog(head)`), the heads it accepted; a new
 * head comes with an RFC 9162 consistency proof from the last one, and a witness that checks
 * it (as both built-in ones do) refuses a head that rewrites what it already saw.
 */
export interface HeadWitness {
  /** For messages, e.g. the file path. */
  readonly name: string;
  /** The last head this witness accepted for `log` (`thread:<id>` or `global`), if any. */
  latest(log: string): Promise<SignedTreeHead | undefined>;
  /**
   * Publishes `head`, proven consistent with `latest(headLog(head))` by `consistency` (empty
   * when the witness holds no head of that log yet).
   * @throws VeridexError `audit_log_inconsistent` when the witness refuses the head.
   */
  submit(head: SignedTreeHead, consistency: readonly string[]): Promise<void>;
  /** Every head this witness holds, in the order it accepted them. */
  heads(): Promise<SignedTreeHead[]>;
}

/**
 * What a checking witness does with a submission: the head is well formed (and signed by one of
 * `keys`, when given), and it extends the witness's last head of the same log. Returns why it
 * must be refused, or undefined.
 */
export function submissionProblem(
  latest: SignedTreeHead | undefined,
  head: SignedTreeHead,
  consistency: readonly string[],
  keys?: readonly EvidenceVerifier[],
): string | undefined {
  const checked = checkTreeHead(head, keys ?? []);
  const problems = keys ? checked.problems : checked.head ? [] : checked.problems;
  if (problems.length > 0) return `the head is not acceptable: ${problems.join('; ')}`;
  if (!latest) return undefined;
  if (head.treeSize < latest.treeSize) {
    return `${describeHead(head)} is older than ${describeHead(latest)} already witnessed: entries were dropped`;
  }
  if (
    !verifyConsistency(latest.treeSize, head.treeSize, latest.rootHash, head.rootHash, consistency)
  ) {
    return `${describeHead(head)} is not consistent with ${describeHead(latest)} witnessed at ${latest.timestamp}: the log was rewritten`;
  }
  return undefined;
}

/** The error a witness (or a publisher) raises for a head that does not extend what was witnessed. */
export function witnessRefusal(witness: string, head: SignedTreeHead, why: string): VeridexError {
  return new VeridexError(
    'audit_log_inconsistent',
    `Witness ${witness} refused ${describeHead(head)}: ${why}.`,
    {
      details: {
        witness,
        scope: head.scope,
        ...(head.threadId !== undefined ? { threadId: head.threadId } : {}),
        treeSize: head.treeSize,
      },
    },
  );
}

/**
 * Checks `tree` against the last head every witness holds for `head`'s log, without publishing:
 * run it before recording a head, so that a log the witnesses would refuse is not even recorded.
 * @throws VeridexError `audit_log_inconsistent` when a witness holds a head `tree` does not extend.
 */
export async function checkWitnesses(
  witnesses: readonly HeadWitness[],
  head: SignedTreeHead,
  tree: MerkleTree,
): Promise<void> {
  for (const witness of witnesses) {
    const latest = await witness.latest(headLog(head));
    const why = latest && inconsistency(tree, latest);
    if (why) throw witnessRefusal(witness.name, head, why);
  }
}

/**
 * Publishes `head` (the root of `tree`) to every witness, each with the consistency proof from
 * the last head it holds. A witness already ahead of `tree`, or holding another root at the same
 * size, proves the log lost or changed entries since: that is an error, not a skip.
 * @throws VeridexError `audit_log_inconsistent`.
 */
export async function publishHead(
  witnesses: readonly HeadWitness[],
  head: SignedTreeHead,
  tree: MerkleTree,
): Promise<void> {
  for (const witness of witnesses) {
    const latest = await witness.latest(headLog(head));
    if (latest) {
      const why = inconsistency(tree, latest);
      if (why) throw witnessRefusal(witness.name, head, why);
      if (latest.treeSize === head.treeSize) continue;
    }
    await witness.submit(head, latest ? tree.consistencyProof(latest.treeSize) : []);
  }
}
