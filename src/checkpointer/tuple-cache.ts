import { hash } from 'node:crypto';
import { chainHash } from './checkpoint-hash.js';
import { jsonbText } from './jsonb-order.js';
import type { PutInput, StoredCheckpoint } from './put-plan.js';
import type { DraftWrite, StoredData, TupleDraft } from './read-tuples.js';
import type { WritesPlan } from './writes-plan.js';

/**
 * What the read statement compares to decide whether a cached tuple is still what is stored:
 * the checkpoint, its row's chain hash (which covers its content and, through its parent's
 * hash, everything it carries over) and a digest of its pending writes' hashes.
 */
export interface TupleToken {
  checkpointId: string;
  hash: Buffer;
  /** SHA-256 over the hashes of its pending writes, sorted bytewise. */
  writesDigest: Buffer;
}

/** A cached tuple: its token and its serialised content. Never mutated once made. */
export interface CachedTuple {
  readonly token: TupleToken;
  readonly draft: TupleDraft;
  /** Each pending write's hash by task id and idx; undefined when not known (then no writes can be added). */
  readonly writeHashes: ReadonlyMap<string, Buffer> | undefined;
}

interface Slot {
  cached: CachedTuple;
  bytes: number;
}

/** SHA-256 of nothing: the writes digest of a checkpoint without pending writes. */
const NO_WRITES = writesDigest([]);

/**
 * The last checkpoint this process stored or read per thread and namespace, serialised, so
 * that `getTuple` can ask the database "is it still this?" and, when it is, skip reading and
 * sending the checkpoint's values. The database decides with the {@link TupleToken} in the
 * same statement that would otherwise read the tuple, so another process writing to the
 * thread, a fork, `prune`, or rows edited in SQL only cost a full read, never a stale answer.
 *
 * A checkpoint put by this process is cached as the read would return it: its new values as
 * serialised, the values it carries over taken from the cached parent by the put statement's
 * own rule (same channel version), metadata in jsonb's key order. If that emulation were
 * ever wrong, its chain hash would still be the one the database computed from the real
 * parent, so the cached tuple could only be served for content the hash covers.
 *
 * Bounded by `capacityBytes` of serialised content; least recently used entries go first.
 */
export class TupleCache {
  readonly #slots = new Map<string, Slot>();
  readonly #capacity: number;
  #bytes = 0;

  constructor(capacityBytes: number) {
    this.#capacity = capacityBytes;
  }

  /** The cached tuple of a thread's namespace, if any. */
  get(threadId: string, checkpointNs: string): CachedTuple | undefined {
    const key = slotKey(threadId, checkpointNs);
    const slot = this.#slots.get(key);
    if (!slot) return undefined;
    this.#slots.delete(key);
    this.#slots.set(key, slot);
    return slot.cached;
  }

  /** Caches a tuple just read, with the token the statement returned for it. */
  afterRead(draft: TupleDraft, token: TupleToken): void {
    const known = draft.writes.length === 0 && token.writesDigest.equals(NO_WRITES);
    this.#store({ token, draft, writeHashes: known ? new Map() : undefined });
  }

  /**
   * Caches a checkpoint this process has just stored. Without its parent in the cache (or
   * with channel versions the emulation does not handle) it forgets the namespace instead.
   */
  afterPut(input: PutInput, stored: StoredCheckpoint): void {
    const key = slotKey(input.threadId, input.checkpointNs);
    const parent = input.parentCheckpointId ? this.#slots.get(key)?.cached : undefined;
    const values = carriedValues(input, stored, parent);
    if (!values || (input.parentCheckpointId && !parent)) {
      this.#forget(key);
      return;
    }
    this.#store({
      token: {
        checkpointId: input.checkpoint.id,
        hash: chainHash(parent?.token.hash ?? null, stored.contentDigest),
        writesDigest: NO_WRITES,
      },
      draft: {
        threadId: input.threadId,
        checkpointNs: input.checkpointNs,
        checkpointId: input.checkpoint.id,
        parentCheckpointId: input.parentCheckpointId ?? null,
        checkpointText: stored.checkpointText,
        metadataText: jsonbText(stored.metadataText),
        values,
        writes: [],
      },
      writeHashes: new Map(),
    });
  }

  /**
   * Adds writes this process has just stored to the cached tuple they belong to, as the
   * writes statement does: a regular write never replaces one already stored for its task
   * and index; a special write (error, interrupt, …) does.
   */
  afterWrites(threadId: string, plans: readonly WritesPlan[]): void {
    for (const plan of plans) {
      const { checkpointNs, checkpointId, taskId, taskPath } = plan.input;
      const key = slotKey(threadId, checkpointNs);
      const cached = this.#slots.get(key)?.cached;
      if (!cached || cached.token.checkpointId !== checkpointId) continue;
      if (!cached.writeHashes) {
        this.#forget(key);
        continue;
      }
      const hashes = new Map(cached.writeHashes);
      const writes = new Map(cached.draft.writes.map((write) => [writeKey(write), write]));
      for (const row of plan.rows) {
        const write: DraftWrite = {
          taskId,
          taskPath,
          idx: row.idx,
          channel: row.channel,
          stored: ownCopy(row.type, row.serialized),
        };
        const id = writeKey(write);
        if (hashes.has(id) && !plan.replace) continue;
        hashes.set(id, row.hash);
        writes.set(id, write);
      }
      this.#store({
        token: { ...cached.token, writesDigest: writesDigest([...hashes.values()]) },
        draft: { ...cached.draft, writes: [...writes.values()] },
        writeHashes: hashes,
      });
    }
  }

  /** Forgets a thread's namespace. */
  forget(threadId: string, checkpointNs: string): void {
    this.#forget(slotKey(threadId, checkpointNs));
  }

  /** Forgets every namespace of a thread (after `deleteThread` or `prune`). */
  forgetThread(threadId: string): void {
    const prefix = slotKey(threadId, '');
    for (const key of [...this.#slots.keys()]) if (key.startsWith(prefix)) this.#forget(key);
  }

  #store(cached: CachedTuple): void {
    const key = slotKey(cached.draft.threadId, cached.draft.checkpointNs);
    this.#forget(key);
    const bytes = draftBytes(cached.draft);
    if (bytes > this.#capacity) return;
    this.#slots.set(key, { cached, bytes });
    this.#bytes += bytes;
    for (const [oldest, slot] of this.#slots) {
      if (this.#bytes <= this.#capacity) break;
      this.#slots.delete(oldest);
      this.#bytes -= slot.bytes;
    }
  }

  #forget(key: string): void {
    const slot = this.#slots.get(key);
    if (!slot) return;
    this.#slots.delete(key);
    this.#bytes -= slot.bytes;
  }
}

/** The writes digest the read statement computes: SHA-256 of the write hashes in byte order. */
export function writesDigest(hashes: readonly Buffer[]): Buffer {
  return hash('sha256', Buffer.concat([...hashes].sort(Buffer.compare)), 'buffer');
}

/**
 * The values of the stored checkpoint: the ones it writes, then each carried channel whose
 * version equals the parent's, with the parent's value (what `PUT_CHECKPOINT` copies).
 * `undefined` when a version is of a kind whose text form in SQL this does not mirror.
 */
function carriedValues(
  input: PutInput,
  stored: StoredCheckpoint,
  parent: CachedTuple | undefined,
): Array<[string, StoredData]> | undefined {
  const values: Array<[string, StoredData]> = stored.values.map(([channel, value]) => [
    channel,
    ownCopy(value.type, value.bytes),
  ]);
  if (stored.carried.length === 0 || !parent) return values;
  const parentVersions: Record<string, unknown> =
    JSON.parse(parent.draft.checkpointText).channel_versions ?? {};
  const parentValues = new Map(parent.draft.values);
  for (const channel of stored.carried) {
    const version = versionText(input.checkpoint.channel_versions[channel]);
    // A version the parent lacks is SQL NULL there, which equals nothing.
    const parentVersion = Object.hasOwn(parentVersions, channel)
      ? versionText(parentVersions[channel])
      : null;
    if (version === undefined || parentVersion === undefined) return undefined;
    const value = parentValues.get(channel);
    if (parentVersion === version && value) values.push([channel, value]);
  }
  return values;
}

/**
 * A channel version as SQL compares it (`->>` on the parent's JSON against the text the put
 * sends), for strings and safe integers; `undefined` for anything else, which is not emulated.
 */
function versionText(version: unknown): string | undefined {
  if (typeof version === 'string') return version;
  if (typeof version === 'number' && Number.isSafeInteger(version)) return String(version);
  return undefined;
}

/** Serialised JSON is ours; other bytes (a serde may pass a Uint8Array through) are copied. */
function ownCopy(type: string, bytes: Uint8Array): StoredData {
  return { type, data: type === 'json' ? bytes : bytes.slice() };
}

function writeKey(write: Pick<DraftWrite, 'taskId' | 'idx'>): string {
  return `${write.taskId}\u0000${write.idx}`;
}

function slotKey(threadId: string, checkpointNs: string): string {
  return `${threadId}\u0000${checkpointNs}`;
}

function draftBytes(draft: TupleDraft): number {
  let bytes = 256 + draft.checkpointText.length + draft.metadataText.length;
  for (const [, stored] of draft.values) bytes += stored.data.length;
  for (const write of draft.writes) bytes += write.stored.data.length + 64;
  return bytes;
}
