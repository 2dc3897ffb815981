import { verifyConsistency } from './merkle-proofs.js';
import type { MerkleTree } from './merkle-tree.js';
import { describeHead, type TreeHead } from './tree-head.js';

/**
 * Why `tree` — a log as it is now — is not an honest extension of `head`, or undefined when it
 * is: the head's entries must all still be there, unchanged and in order. Checked the way a
 * client without the entries would, with an RFC 9162 consistency proof from the head's size to
 * the tree's.
 */
export function inconsistency(tree: MerkleTree, head: TreeHead): string | undefined {
  if (head.treeSize > tree.size) {
    return `${describeHead(head)} was signed at ${head.timestamp}, and the log now has only ${tree.size}: entries it covered were dropped`;
  }
  const proof = tree.consistencyProof(head.treeSize);
  if (verifyConsistency(head.treeSize, tree.size, head.rootHash, tree.root(), proof)) {
    return undefined;
  }
  return `the log is not consistent with ${describeHead(head)} signed at ${head.timestamp}: entries it covered were rewritten, reordered, inserted or dropped`;
}
