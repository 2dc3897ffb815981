import type { Database } from '../db/index.js';
import { canonicalJson } from './canonical-json.js';
import {
  FIND_GLOBAL_HEAD,
  FIND_THREAD_HEAD,
  INSERT_GLOBAL_HEAD,
  INSERT_THREAD_HEAD,
  LIST_GLOBAL_HEADS,
  LIST_GLOBAL_LEAVES,
  LIST_THREAD_HEADS,
  LOCK_TREE_HEADS,
} from './sql.js';
import type { SignedTreeHead } from './tree-head.js';
import { conflictingHead, type TreeHeadStore } from './tree-head-store.js';

const parse = (rows: Array<{ head: string }>): SignedTreeHead[] =>
  rows.map((row) => JSON.parse(row.head) as SignedTreeHead);

/**
 * A {@link TreeHeadStore} in `veridex_audit_tree_heads` and `veridex_audit_global_heads`
 * (PostgreSQL or PGlite; run `migrate()` first). Thread heads get their global index under an
 * advisory lock, so concurrent recorders never leave a gap a global head could skip over.
 * What the tables hold is only as trustworthy as the database: verifiers check every head's
 * signature and compare with heads published elsewhere.
 */
export class PostgresTreeHeadStore implements TreeHeadStore {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  recordThreadHead(head: SignedTreeHead): Promise<SignedTreeHead> {
    return this.#db.transaction(async (tx) => {
      await tx.query(LOCK_TREE_HEADS);
      const { rows } = await tx.query(INSERT_THREAD_HEAD, [
        head.threadId,
        head.treeSize,
        head.rootHash,
        canonicalJson(head),
      ]);
      if (rows.length > 0) return head;
      const existing = await tx.query<{ head: string }>(FIND_THREAD_HEAD, [
        head.threadId,
        head.treeSize,
      ]);
      const stored = parse(existing.rows)[0]!;
      if (stored.rootHash !== head.rootHash) throw conflictingHead(stored, head);
      return stored;
    });
  }

  async threadHeads(threadId: string): Promise<SignedTreeHead[]> {
    return parse((await this.#db.query<{ head: string }>(LIST_THREAD_HEADS, [threadId])).rows);
  }

  async globalLeaves(): Promise<SignedTreeHead[]> {
    return parse((await this.#db.query<{ head: string }>(LIST_GLOBAL_LEAVES)).rows);
  }

  async recordGlobalHead(head: SignedTreeHead): Promise<SignedTreeHead> {
    const { rows } = await this.#db.query(INSERT_GLOBAL_HEAD, [
      head.treeSize,
      head.rootHash,
      canonicalJson(head),
    ]);
    if (rows.length > 0) return head;
    const existing = await this.#db.query<{ head: string }>(FIND_GLOBAL_HEAD, [head.treeSize]);
    const stored = parse(existing.rows)[0]!;
    if (stored.rootHash !== head.rootHash) throw conflictingHead(stored, head);
    return stored;
  }

  async globalHeads(): Promise<SignedTreeHead[]> {
    return parse((await this.#db.query<{ head: string }>(LIST_GLOBAL_HEADS)).rows);
  }
}
