import type { AuditLog } from './audit-log.js';
import { eventTree } from './event-tree.js';
import { inconsistency } from './log-consistency.js';
import { MerkleTree } from './merkle-tree.js';
import type { EvidenceVerifier } from './signer.js';
import { checkTreeHead, headLeafHash, type SignedTreeHead } from './tree-head.js';
import { verifyChain } from './verify-chain.js';

/** How the database's log fared against one witnessed head. */
export interface WitnessedHeadCheck {
  /** Where the head came from: the line of a head file, or the index in the list given. */
  at: number;
  /** The head, when it is well formed. */
  head?: SignedTreeHead;
  /** For a thread head vouched for by a witnessed global head: its index in the global tree. */
  globalIndex?: number;
  /**
   * `consistent`: the log extends the head. `inconsistent`: it does not (rewritten, dropped,
   * reordered or inserted entries, or a broken chain). `invalid`: the head itself is malformed or
   * not signed by a trusted key.
   */
  status: 'consistent' | 'inconsistent' | 'invalid';
  reason?: string;
}

/** The outcome of {@link verifyWitnessedHeads}. */
export interface WitnessVerification {
  /** True when every witnessed head is valid and the database's log extends each one. */
  valid: boolean;
  /** One check per witnessed head, in order, then one per thread head a global head vouches for. */
  checks: WitnessedHeadCheck[];
  /** The first check that failed: the earliest point where the log departs from what was published. */
  first?: WitnessedHeadCheck;
}

/**
 * Checks the database's current log against heads published earlier (a witness's heads, the
 * lines of a head file): each thread's events must recompute as a chain and extend every
 * witnessed head of that thread; the recorded thread heads must extend every witnessed global
 * head — and then every thread head a witnessed global head covers is checked against its
 * thread's events too, so one published global head vouches for all threads. Detects an insider
 * who rewrote, dropped, reordered or inserted events and recomputed the hash chain.
 *
 * @example
 * const result = await verifyWitnessedHeads(audit, readHeadFile('heads.jsonl').map((e) => ({ at: e.line, value: e.value })), { keys: [verifier] });
 * if (!result.valid) console.error(result.first);
 */
export async function verifyWitnessedHeads(
  audit: AuditLog,
  heads: ReadonlyArray<{ at: number; value: unknown }>,
  options: { keys: readonly EvidenceVerifier[] },
): Promise<WitnessVerification> {
  const threads = new Map<string, Promise<{ tree?: MerkleTree; broken?: string }>>();
  const thread = (threadId: string) => {
    let entry = threads.get(threadId);
    if (!entry) {
      entry = audit.events(threadId).then(
        (events) => {
          const chain = verifyChain(events);
          return chain.valid
            ? { tree: eventTree(events) }
            : {
                broken: `thread "${threadId}" has a broken hash chain at event ${chain.brokenAt}: ${chain.reason}`,
              };
        },
        // A row an insider made unreadable is a finding, not a crash of the verifier.
        (error: Error) => ({ broken: `thread "${threadId}" cannot be read: ${error.message}` }),
      );
      threads.set(threadId, entry);
    }
    return entry;
  };
  let globalLeaves: SignedTreeHead[] | undefined;
  let globalTree: MerkleTree | undefined;
  const checks: WitnessedHeadCheck[] = [];
  let vouched = 0;
  let vouchedAt = 0;
  for (const { at, value } of heads) {
    const checked = checkTreeHead(value, options.keys);
    const head = checked.head;
    if (!head || checked.problems.length > 0) {
      checks.push({
        at,
        ...(head ? { head } : {}),
        status: 'invalid',
        reason: checked.problems.join('; '),
      });
      continue;
    }
    let reason: string | undefined;
    if (head.scope === 'thread') {
      const { tree, broken } = await thread(head.threadId!);
      reason = broken ?? inconsistency(tree!, head);
    } else {
      try {
        globalLeaves ??= await audit.heads.globalLeaves();
        globalTree ??= new MerkleTree(globalLeaves.map(headLeafHash));
        reason = inconsistency(globalTree, head);
      } catch (error) {
        reason = `the recorded thread heads cannot be read: ${(error as Error).message}`;
      }
      if (!reason && head.treeSize > vouched) {
        vouched = head.treeSize;
        vouchedAt = at;
      }
    }
    checks.push({
      at,
      head,
      status: reason ? 'inconsistent' : 'consistent',
      ...(reason ? { reason } : {}),
    });
  }
  // Thread heads inside a witnessed global tree are as good as witnessed themselves.
  for (let index = 0; index < vouched; index++) {
    const head = globalLeaves![index]!;
    const { tree, broken } = await thread(String(head.threadId));
    const reason = broken ?? inconsistency(tree!, head);
    checks.push({
      at: vouchedAt,
      head,
      globalIndex: index,
      status: reason ? 'inconsistent' : 'consistent',
      ...(reason ? { reason } : {}),
    });
  }
  const first = checks.find((check) => check.status !== 'consistent');
  return { valid: first === undefined, checks, ...(first ? { first } : {}) };
}
