import type { Database } from '../db/index.js';
import { VeridexError } from '../errors/index.js';
import { chainHash, checkpointContentDigest, valueDigest, writeHash } from './checkpoint-hash.js';
import { type StoredData, storedData } from './read-tuples.js';
import {
  SELECT_THREAD_CHECKPOINTS,
  SELECT_THREAD_HEAD,
  SELECT_THREAD_PRUNED,
  SELECT_THREAD_VALUES,
  SELECT_THREAD_WRITES,
} from './sql.js';

/** What kind of tampering an issue shows. */
export type VerificationIssueKind = 'modified' | 'deleted' | 'inserted' | 'reordered';

/** One finding of {@link verifyThread}. */
export interface VerificationIssue {
  kind: VerificationIssueKind;
  checkpointNs: string;
  /** The checkpoint concerned; empty when the issue is about the thread as a whole. */
  checkpointId: string;
  message: string;
}

/** The result of {@link verifyThread}. */
export interface ThreadVerification {
  threadId: string;
  /** True when no issue was found. */
  valid: boolean;
  /** Checkpoints checked (pruned ones are not counted). */
  checkpoints: number;
  issues: VerificationIssue[];
  /**
   * Chain hash of the latest checkpoint (hex), or null for an unknown thread. Record it
   * elsewhere (an audit event, an evidence bundle) and pass it back as `expectedHeadHash`:
   * anyone who can write the tables can also recompute every hash, but not that record.
   */
  headHash: string | null;
}

/** Options for {@link verifyThread}. */
export interface VerifyThreadOptions {
  /** A head hash recorded earlier; a different head means the chain was rewritten. */
  expectedHeadHash?: string;
}

interface CheckpointRow {
  checkpoint_ns: string;
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  checkpoint: string;
  metadata: string;
  value_channels: string[];
  value_refs: Buffer[];
  new_value_count: number;
  parent_hash: Buffer | null;
  hash: Buffer;
  /** Puts of the same id after the first: each also counted in `checkpoint_count`. */
  repeated_puts: number;
}

interface ValueRow {
  ref: string;
  type: string;
  blob: Buffer | null;
  body: string | null;
  expected: number | null;
  actual: number | null;
}

interface WriteRow {
  checkpoint_ns: string;
  checkpoint_id: string;
  task_id: string;
  task_path: string;
  idx: number;
  channel: string;
  type: string;
  blob: Buffer | null;
  body: string | null;
  expected: number | null;
  actual: number | null;
  hash: Buffer;
}

/**
 * Walks every checkpoint and pending write of a thread and recomputes its hash from what is
 * stored: a row edited in SQL shows as `modified`, a removed row (or value, or list element)
 * as `deleted`, a row added outside the checkpointer as `inserted`, and a row re-linked to
 * another parent or moved before its parent as `reordered`. Reads one consistent snapshot.
 *
 * @example
 * const report = await verifyThread(db, 'thread-1');
 * if (!report.valid) console.error(report.issues);
 */
export async function verifyThread(
  db: Database,
  threadId: string,
  options: VerifyThreadOptions = {},
): Promise<ThreadVerification> {
  return db.transaction(
    async (tx) => {
      const head = (await tx.query(SELECT_THREAD_HEAD, [threadId])).rows[0] as
        | {
            thread_key: string;
            checkpoint_count: string;
            pruned_count: string;
            latest_checkpoint_ns: string | null;
            latest_checkpoint_id: string | null;
            latest_hash: Buffer | null;
          }
        | undefined;
      if (!head) return { threadId, valid: true, checkpoints: 0, issues: [], headHash: null };
      const key = [head.thread_key];
      const checkpoints = (await tx.query<CheckpointRow>(SELECT_THREAD_CHECKPOINTS, key)).rows;
      const values = new Map<string, StoredData | Error>();
      const valueRows = await tx.query<ValueRow>(SELECT_THREAD_VALUES, key);
      for (const row of valueRows.rows) {
        values.set(
          row.ref,
          attempt(() => storedData(row, row.type, 'a value')),
        );
      }
      const writes = (await tx.query<WriteRow>(SELECT_THREAD_WRITES, key)).rows;
      const pruned = new Map(
        (
          await tx.query<{ checkpoint_ns: string; checkpoint_id: string; hash: Buffer }>(
            SELECT_THREAD_PRUNED,
            key,
          )
        ).rows.map((row) => [address(row.checkpoint_ns, row.checkpoint_id), row.hash]),
      );
      const issues: VerificationIssue[] = [];
      const byAddress = new Map(
        checkpoints.map((row) => [address(row.checkpoint_ns, row.checkpoint_id), row]),
      );
      for (const row of checkpoints) {
        checkCheckpoint(threadId, row, byAddress, pruned, values, issues);
      }
      for (const row of writes) checkWrite(threadId, row, issues);
      const puts = checkpoints.reduce((sum, row) => sum + 1 + row.repeated_puts, 0);
      checkHead(head, puts, byAddress, issues, options.expectedHeadHash);
      return {
        threadId,
        valid: issues.length === 0,
        checkpoints: checkpoints.length,
        issues,
        headHash: head.latest_hash ? head.latest_hash.toString('hex') : null,
      };
    },
    { isolation: 'repeatable read' },
  );
}

function checkCheckpoint(
  threadId: string,
  row: CheckpointRow,
  byAddress: ReadonlyMap<string, CheckpointRow>,
  pruned: ReadonlyMap<string, Buffer>,
  values: ReadonlyMap<string, StoredData | Error>,
  issues: VerificationIssue[],
): void {
  const report = (kind: VerificationIssueKind, message: string) =>
    issues.push({
      kind,
      checkpointNs: row.checkpoint_ns,
      checkpointId: row.checkpoint_id,
      message,
    });
  const newValues: Array<[string, string]> = [];
  for (let index = 0; index < row.new_value_count; index++) {
    const channel = row.value_channels[index] ?? '';
    const stored = values.get(row.value_refs[index]?.toString('hex') ?? '');
    if (!stored || stored instanceof Error) {
      report('deleted', `The value of channel "${channel}" (or part of it) is missing.`);
      return;
    }
    newValues.push([channel, valueDigest(stored.type, bytesOf(stored)).toString('hex')]);
  }
  let content: Buffer;
  try {
    content = checkpointContentDigest({
      threadId,
      checkpointNs: row.checkpoint_ns,
      checkpointId: row.checkpoint_id,
      parentCheckpointId: row.parent_checkpoint_id,
      checkpoint: JSON.parse(row.checkpoint),
      metadata: JSON.parse(row.metadata),
      values: newValues,
    });
  } catch {
    report('modified', 'The stored checkpoint or metadata is no longer valid JSON.');
    return;
  }
  if (!chainHash(row.parent_hash, content).equals(row.hash)) {
    report('modified', 'Its content no longer matches its hash.');
  }
  const parentId = row.parent_checkpoint_id;
  if (parentId === null) return;
  if (parentId === row.checkpoint_id || parentId > row.checkpoint_id) {
    report('reordered', `Its parent ${parentId} does not come before it.`);
  }
  const parentAddress = address(row.checkpoint_ns, parentId);
  const parent = byAddress.get(parentAddress);
  const parentHash = parent?.hash ?? pruned.get(parentAddress);
  if (!parentHash) {
    report('deleted', `Its parent checkpoint ${parentId} is missing.`);
    return;
  }
  if (!row.parent_hash?.equals(parentHash)) {
    report('reordered', `It was written under a different parent than ${parentId} is now.`);
  }
  if (parent) checkCarriedValues(row, parent, report);
}

/** Values carried over from the parent must be the parent's own references, unchanged. */
function checkCarriedValues(
  row: CheckpointRow,
  parent: CheckpointRow,
  report: (kind: VerificationIssueKind, message: string) => void,
): void {
  for (let index = row.new_value_count; index < row.value_channels.length; index++) {
    const channel = row.value_channels[index]!;
    const position = parent.value_channels.indexOf(channel);
    const ref = row.value_refs[index];
    if (position < 0 || !ref || !parent.value_refs[position]?.equals(ref)) {
      report('modified', `Its value of channel "${channel}" is not the one its parent holds.`);
    }
  }
}

function checkWrite(threadId: string, row: WriteRow, issues: VerificationIssue[]): void {
  const report = (kind: VerificationIssueKind, message: string) =>
    issues.push({
      kind,
      checkpointNs: row.checkpoint_ns,
      checkpointId: row.checkpoint_id,
      message,
    });
  const stored = attempt(() => storedData(row, row.type, 'a write'));
  if (stored instanceof Error) {
    report('deleted', `Part of the write to "${row.channel}" by task ${row.task_id} is missing.`);
    return;
  }
  const expected = writeHash({
    threadId,
    checkpointNs: row.checkpoint_ns,
    checkpointId: row.checkpoint_id,
    taskId: row.task_id,
    taskPath: row.task_path,
    idx: row.idx,
    channel: row.channel,
    type: row.type,
    valueDigest: valueDigest(row.type, bytesOf(stored)).toString('hex'),
  });
  if (!expected.equals(row.hash)) {
    report('modified', `The write to "${row.channel}" by task ${row.task_id} was changed.`);
  }
  // A write whose checkpoint is absent is not reported: LangGraph stores writes before the
  // checkpoint they belong to is committed, and a crash in between leaves them behind.
}

function checkHead(
  head: {
    checkpoint_count: string;
    pruned_count: string;
    latest_checkpoint_ns: string | null;
    latest_checkpoint_id: string | null;
    latest_hash: Buffer | null;
  },
  presentPuts: number,
  byAddress: ReadonlyMap<string, CheckpointRow>,
  issues: VerificationIssue[],
  expectedHeadHash: string | undefined,
): void {
  const written = Number(head.checkpoint_count);
  const accounted = presentPuts + Number(head.pruned_count);
  if (accounted < written) {
    issues.push({
      kind: 'deleted',
      checkpointNs: '',
      checkpointId: '',
      message: `${written} checkpoints were written but only ${accounted} remain or were pruned.`,
    });
  } else if (accounted > written) {
    issues.push({
      kind: 'inserted',
      checkpointNs: '',
      checkpointId: '',
      message: `${accounted - written} checkpoint(s) were added outside the checkpointer.`,
    });
  }
  if (head.latest_checkpoint_id !== null && head.latest_hash) {
    const ns = head.latest_checkpoint_ns ?? '';
    const latest = byAddress.get(address(ns, head.latest_checkpoint_id));
    if (!latest) {
      issues.push({
        kind: 'deleted',
        checkpointNs: ns,
        checkpointId: head.latest_checkpoint_id,
        message: 'The latest checkpoint written to this thread is missing.',
      });
    } else if (!latest.hash.equals(head.latest_hash)) {
      issues.push({
        kind: 'modified',
        checkpointNs: ns,
        checkpointId: head.latest_checkpoint_id,
        message: 'The latest checkpoint no longer has the hash it was written with.',
      });
    }
    if (expectedHeadHash !== undefined && expectedHeadHash !== head.latest_hash.toString('hex')) {
      issues.push({
        kind: 'modified',
        checkpointNs: ns,
        checkpointId: head.latest_checkpoint_id,
        message: `The chain head is ${head.latest_hash.toString('hex')}, not the recorded ${expectedHeadHash}: the chain was rewritten.`,
      });
    }
  }
}

function bytesOf(stored: StoredData): Uint8Array {
  return typeof stored.data === 'string' ? Buffer.from(stored.data, 'utf8') : stored.data;
}

function address(checkpointNs: string, checkpointId: string): string {
  return `${checkpointNs}\u0000${checkpointId}`;
}

function attempt<T>(fn: () => T): T | Error {
  try {
    return fn();
  } catch (error) {
    if (VeridexError.is(error, 'checkpoint_invalid')) return error;
    throw error;
  }
}
