import { VeridexError } from '../errors/index.js';
import type { AuditLog } from './audit-log.js';
import { eventTree } from './event-tree.js';
import { checkWitnesses, publishHead } from './head-witness.js';
import { inconsistency } from './log-consistency.js';
import { MerkleTree } from './merkle-tree.js';
import type { EvidenceSigner } from './signer.js';
import {
  headLeafHash,
  type SignedTreeHead,
  signTreeHead,
  TREE_HEAD_FORMAT,
  type TreeHead,
} from './tree-head.js';

/** Options for {@link TransparencyLog}. */
export interface TransparencyLogOptions {
  /** The log whose threads are signed; heads go to `audit.heads` and `audit.witnesses`. */
  audit: AuditLog;
  /** Who signs heads: the agent's evidence key (the one `veridex verify --key` trusts), plus counter-signers. */
  signers: readonly EvidenceSigner[];
  /** Default: the system clock. */
  now?: () => Date;
}

/** What {@link TransparencyLog.publish} signed. */
export interface PublishedHeads {
  /** New thread heads, one per thread that grew since its last head. */
  threads: SignedTreeHead[];
  /** The global head over every thread head recorded so far. */
  global: SignedTreeHead;
}

/**
 * Signs RFC 9162-style tree heads over an {@link AuditLog}: per thread (leaf i = event i) and a
 * global one over every thread head recorded (leaf j = the j-th thread head), records them in
 * `audit.heads` and publishes them to `audit.witnesses`. Before signing, the log is checked
 * against every head already recorded for it, so a history rewritten in the database is refused
 * rather than signed (`audit_log_inconsistent`). Run `publish()` from a scheduled job and ship
 * the witness file: one global head vouches for every thread.
 *
 * @example
 * const log = new TransparencyLog({ audit, signers: [loadOrCreateSigner().signer] });
 * await log.publish(); // { threads: [...new thread heads], global }
 */
export class TransparencyLog {
  readonly #audit: AuditLog;
  readonly #signers: readonly EvidenceSigner[];
  readonly #now: () => Date;

  constructor(options: TransparencyLogOptions) {
    if (options.signers.length === 0) {
      throw new VeridexError('config_invalid', 'TransparencyLog needs at least one signer.');
    }
    this.#audit = options.audit;
    this.#signers = options.signers;
    this.#now = options.now ?? (() => new Date());
  }

  /**
   * Signs, records and publishes a head over the thread's current events; returns the recorded
   * head (the earlier one when the thread has not grown since).
   * @throws VeridexError `audit_log_inconsistent` when the events no longer extend a recorded or witnessed head.
   */
  async signThread(threadId: string): Promise<SignedTreeHead> {
    const tree = eventTree(await this.#audit.events(threadId));
    const recorded = await this.#audit.heads.threadHeads(threadId);
    return this.#signAndPublish(tree, recorded, { scope: 'thread', threadId });
  }

  /**
   * Signs, records and publishes a global head over every thread head recorded so far.
   * @throws VeridexError `audit_log_inconsistent` when recorded thread heads were changed or removed.
   */
  async signGlobal(): Promise<SignedTreeHead> {
    const leaves = await this.#audit.heads.globalLeaves();
    const tree = new MerkleTree(leaves.map(headLeafHash));
    const recorded = await this.#audit.heads.globalHeads();
    return this.#signAndPublish(tree, recorded, { scope: 'global' });
  }

  /**
   * Signs a head for every thread that grew since its last head, then a global head.
   * @throws VeridexError `config_invalid` when the audit store cannot list its threads.
   */
  async publish(): Promise<PublishedHeads> {
    const store = this.#audit.store;
    if (!store.threads) {
      throw new VeridexError(
        'config_invalid',
        'TransparencyLog.publish needs an audit store that lists its threads (MemoryAuditStore, PostgresAuditStore); call signThread for each thread instead.',
      );
    }
    const threads: SignedTreeHead[] = [];
    for (const { threadId, length } of await store.threads()) {
      const last = (await this.#audit.heads.threadHeads(threadId)).at(-1);
      if (last?.treeSize === length) continue;
      threads.push(await this.signThread(threadId));
    }
    return { threads, global: await this.signGlobal() };
  }

  async #signAndPublish(
    tree: MerkleTree,
    recorded: readonly SignedTreeHead[],
    log: Pick<TreeHead, 'scope' | 'threadId'>,
  ): Promise<SignedTreeHead> {
    for (const head of recorded) {
      const why = inconsistency(tree, head);
      if (why) {
        throw new VeridexError('audit_log_inconsistent', `Refusing to sign a new head: ${why}.`, {
          details: {
            scope: log.scope,
            ...(log.threadId !== undefined ? { threadId: log.threadId } : {}),
            treeSize: head.treeSize,
          },
        });
      }
    }
    const head = signTreeHead(
      {
        format: TREE_HEAD_FORMAT,
        ...log,
        treeSize: tree.size,
        rootHash: tree.root(),
        timestamp: this.#now().toISOString(),
      },
      this.#signers,
    );
    await checkWitnesses(this.#audit.witnesses, head, tree);
    const heads = this.#audit.heads;
    const stored =
      log.scope === 'global'
        ? await heads.recordGlobalHead(head)
        : await heads.recordThreadHead(head);
    await publishHead(this.#audit.witnesses, stored, tree);
    return stored;
  }
}
