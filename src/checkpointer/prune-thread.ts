import type { Database } from '../db/index.js';
import { VeridexError } from '../errors/index.js';
import {
  COLLECT_BLOBS,
  COLLECT_ELEMENTS,
  COLLECT_ITEMS,
  DELETE_PRUNED_CHECKPOINTS,
  LOCK_THREAD_EXCLUSIVE,
  SELECT_PRUNE_CANDIDATES,
  SELECT_THREAD_HEAD,
} from './sql.js';

/** Options for {@link pruneThread}. */
export interface PruneOptions {
  /** Newest checkpoints to keep in each namespace (at least 1). */
  keepLast: number;
}

/** What {@link pruneThread} removed. */
export interface PruneResult {
  checkpoints: number;
  writes: number;
  blobs: number;
  items: number;
  elements: number;
}

interface Candidate {
  checkpoint_ns: string;
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  value_channels: string[];
  delta_counters: Record<string, unknown> | null;
  has_writes: boolean;
}

/**
 * Removes a thread's old checkpoints, their writes, and the stored values and list elements
 * nothing else refers to. Keeps, in every namespace, the newest `keepLast` checkpoints and
 * also any checkpoint that is still needed:
 * - one with pending writes and no child: a run suspended in `interrupt()` or failed there
 *   resumes from it (including on a branch that is not the newest);
 * - the ancestors a kept checkpoint's `DeltaChannel`s replay from, up to each channel's
 *   stored seed.
 * Pruned checkpoints leave their hash behind, so `verifyThread` still checks the survivors.
 * Holds the thread's lock: writers to this thread wait, other threads do not.
 *
 * @throws VeridexError `config_invalid` when `keepLast` is not a positive integer.
 * @example await pruneThread(db, 'thread-1', { keepLast: 20 });
 */
export async function pruneThread(
  db: Database,
  threadId: string,
  options: PruneOptions,
): Promise<PruneResult> {
  if (!Number.isInteger(options.keepLast) || options.keepLast < 1) {
    throw new VeridexError(
      'config_invalid',
      `prune needs keepLast to be a positive integer (the newest checkpoints to keep); got ${options.keepLast}.`,
    );
  }
  return db.transaction(async (tx) => {
    const none: PruneResult = { checkpoints: 0, writes: 0, blobs: 0, items: 0, elements: 0 };
    await tx.query(LOCK_THREAD_EXCLUSIVE, [threadId]);
    const head = (await tx.query<{ thread_key: string }>(SELECT_THREAD_HEAD, [threadId])).rows[0];
    if (!head) return none;
    const key = head.thread_key;
    const candidates = (await tx.query<Candidate>(SELECT_PRUNE_CANDIDATES, [key])).rows;
    const keep = keepSet(candidates, options.keepLast);
    const doomed = candidates.filter((row) => !keep.has(id(row)));
    if (doomed.length === 0) return none;
    const deleted = (
      await tx.query<{ checkpoints: number; writes: number }>(DELETE_PRUNED_CHECKPOINTS, [
        key,
        doomed.map((row) => row.checkpoint_ns),
        doomed.map((row) => row.checkpoint_id),
      ])
    ).rows[0]!;
    // Blobs and items first: elements are collected by what items and writes still use.
    const count = async (sql: string) =>
      (await tx.query<{ deleted: number }>(sql, [key])).rows[0]!.deleted;
    const blobs = await count(COLLECT_BLOBS);
    const items = await count(COLLECT_ITEMS);
    const elements = await count(COLLECT_ELEMENTS);
    return { checkpoints: deleted.checkpoints, writes: deleted.writes, blobs, items, elements };
  });
}

/** The checkpoints (by namespace and id) prune must keep. */
function keepSet(candidates: readonly Candidate[], keepLast: number): Set<string> {
  const keep = new Set<string>();
  const byId = new Map(candidates.map((row) => [id(row), row]));
  const hasChild = new Set(
    candidates
      .filter((row) => row.parent_checkpoint_id !== null)
      .map((row) => `${row.checkpoint_ns}\u0000${row.parent_checkpoint_id}`),
  );
  const namespaces = new Map<string, Candidate[]>();
  for (const row of candidates) {
    const list = namespaces.get(row.checkpoint_ns) ?? [];
    list.push(row);
    namespaces.set(row.checkpoint_ns, list);
  }
  for (const rows of namespaces.values()) {
    rows.sort((left, right) => (left.checkpoint_id < right.checkpoint_id ? 1 : -1));
    for (const row of rows.slice(0, keepLast)) keep.add(id(row));
  }
  for (const row of candidates) {
    if (row.has_writes && !hasChild.has(id(row))) keep.add(id(row));
  }
  for (const kept of [...keep]) keepDeltaAncestors(byId.get(kept)!, byId, keep);
  return keep;
}

/** Keeps the ancestors a checkpoint's delta channels replay writes from, up to their seeds. */
function keepDeltaAncestors(
  row: Candidate,
  byId: ReadonlyMap<string, Candidate>,
  keep: Set<string>,
): void {
  const unseeded = new Set(Object.keys(row.delta_counters ?? {}));
  let cursor = row.parent_checkpoint_id;
  while (unseeded.size > 0 && cursor !== null) {
    const ancestor = byId.get(`${row.checkpoint_ns}\u0000${cursor}`);
    if (!ancestor) return;
    keep.add(id(ancestor));
    for (const channel of ancestor.value_channels) unseeded.delete(channel);
    cursor = ancestor.parent_checkpoint_id;
  }
}

function id(row: Candidate): string {
  return `${row.checkpoint_ns}\u0000${row.checkpoint_id}`;
}
