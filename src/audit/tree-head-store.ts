import { VeridexError } from '../errors/index.js';
import { describeHead, type SignedTreeHead } from './tree-head.js';

/**
 * Where signed tree heads are kept next to the audit log: every thread head ever recorded (the
 * leaves of the global tree, in recording order) and the global heads signed over them.
 * Recording is idempotent per log and size; a second head of the same size with another root
 * means the log was rewritten in between, and is refused.
 */
export interface TreeHeadStore {
  /**
   * Records a thread head as the next leaf of the global tree and returns the stored head (the
   * earlier one when the thread already has a head of that size and root).
   * @throws VeridexError `audit_log_inconsistent` when a head of that size has another root.
   */
  recordThreadHead(head: SignedTreeHead): Promise<SignedTreeHead>;
  /** A thread's heads by ascending size. */
  threadHeads(threadId: string): Promise<SignedTreeHead[]>;
  /** Every thread head in recording order: the leaves of the global tree. */
  globalLeaves(): Promise<SignedTreeHead[]>;
  /**
   * Records a global head; idempotent per size like {@link recordThreadHead}.
   * @throws VeridexError `audit_log_inconsistent` when a global head of that size has another root.
   */
  recordGlobalHead(head: SignedTreeHead): Promise<SignedTreeHead>;
  /** The global heads by ascending size. */
  globalHeads(): Promise<SignedTreeHead[]>;
}

/** The error for a second head of the same log and size with another root. */
export function conflictingHead(stored: SignedTreeHead, head: SignedTreeHead): VeridexError {
  return new VeridexError(
    'audit_log_inconsistent',
    `A head for ${describeHead(head)} was already signed with root ${stored.rootHash} (at ${stored.timestamp}); the log now has root ${head.rootHash}. Its entries were rewritten, reordered or replaced since: run \`veridex audit verify\` against your published heads.`,
    {
      details: {
        scope: head.scope,
        ...(head.threadId !== undefined ? { threadId: head.threadId } : {}),
        treeSize: head.treeSize,
      },
    },
  );
}

/** A {@link TreeHeadStore} in process memory: for tests and quick starts, next to a `MemoryAuditStore`. */
export class MemoryTreeHeadStore implements TreeHeadStore {
  readonly #leaves: SignedTreeHead[] = [];
  readonly #global: SignedTreeHead[] = [];

  async recordThreadHead(head: SignedTreeHead): Promise<SignedTreeHead> {
    const stored = this.#leaves.find(
      (candidate) => candidate.threadId === head.threadId && candidate.treeSize === head.treeSize,
    );
    if (stored) return same(stored, head);
    this.#leaves.push(head);
    return head;
  }

  async threadHeads(threadId: string): Promise<SignedTreeHead[]> {
    return this.#leaves
      .filter((head) => head.threadId === threadId)
      .sort((a, b) => a.treeSize - b.treeSize);
  }

  async globalLeaves(): Promise<SignedTreeHead[]> {
    return [...this.#leaves];
  }

  async recordGlobalHead(head: SignedTreeHead): Promise<SignedTreeHead> {
    const stored = this.#global.find((candidate) => candidate.treeSize === head.treeSize);
    if (stored) return same(stored, head);
    this.#global.push(head);
    this.#global.sort((a, b) => a.treeSize - b.treeSize);
    return head;
  }

  async globalHeads(): Promise<SignedTreeHead[]> {
    return [...this.#global];
  }
}

function same(stored: SignedTreeHead, head: SignedTreeHead): SignedTreeHead {
  if (stored.rootHash !== head.rootHash) throw conflictingHead(stored, head);
  return stored;
}
