import { VeridexError } from '../errors/index.js';
import type {
  IdempotencyRecord,
  IdempotencyState,
  IdempotencyStore,
  InDoubtResolution,
  ReserveOptions,
  ReserveOutcome,
  StoredFailure,
} from './idempotency-store.js';

/**
 * An {@link IdempotencyStore} in process memory: for tests and single-process quick starts.
 * Keys do not survive a restart; use `PostgresIdempotencyStore` when they must.
 *
 * @example
 * const idempotency = new MemoryIdempotencyStore();
 * await runTool(sendEmail, args, { idempotency, threadId, toolCallId });
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  readonly #records = new Map<string, IdempotencyRecord>();
  readonly #now: () => number;
  readonly #maxSettled: number;

  /**
   * @param options.now clock in epoch milliseconds (injectable for lease tests).
   * @param options.maxSettled how many completed or failed keys to remember (default 100,000);
   *   beyond that the oldest are forgotten, so a long-running process does not grow without
   *   bound. Live keys (reserved, executing, in doubt) are never dropped.
   */
  constructor(options: { now?: () => number; maxSettled?: number } = {}) {
    this.#now = options.now ?? Date.now;
    this.#maxSettled = options.maxSettled ?? 100_000;
  }

  /** Number of keys held (for monitoring and tests). */
  get size(): number {
    return this.#records.size;
  }

  #evictSettled(): void {
    if (this.#records.size <= this.#maxSettled) return;
    // Map iteration is insertion order: the oldest keys come first.
    for (const [key, record] of this.#records) {
      if (this.#records.size <= this.#maxSettled) return;
      if (record.state === 'completed' || record.state === 'failed') this.#records.delete(key);
    }
  }

  async reserve(key: string, options: ReserveOptions): Promise<ReserveOutcome> {
    const now = this.#now();
    const existing = this.#records.get(key);
    if (existing === undefined || (existing.state === 'reserved' && expired(existing, now))) {
      const record: IdempotencyRecord = {
        key,
        state: 'reserved',
        owner: options.owner,
        toolName: options.toolName,
        ...(options.fingerprint !== undefined ? { fingerprint: options.fingerprint } : {}),
        leaseExpiresAt: new Date(now + options.leaseMs),
        createdAt: existing?.createdAt ?? new Date(now),
        updatedAt: new Date(now),
      };
      this.#records.set(key, record);
      this.#evictSettled();
      return { status: 'acquired', record: { ...record } };
    }
    if (existing.state === 'executing' && expired(existing, now)) {
      this.#update(existing, { state: 'in_doubt' }, now);
    }
    switch (existing.state) {
      case 'completed':
      case 'failed':
      case 'in_doubt':
        return { status: existing.state, record: { ...existing } } as ReserveOutcome;
      default:
        if (existing.owner === options.owner)
          return { status: 'acquired', record: { ...existing } };
        return { status: 'busy', record: { ...existing } };
    }
  }

  async markExecuting(key: string, owner: string, leaseMs: number): Promise<void> {
    const record = this.#held(key, owner, LIVE);
    const now = this.#now();
    record.state = 'executing';
    record.leaseExpiresAt = new Date(now + leaseMs);
    record.updatedAt = new Date(now);
  }

  async commit(key: string, owner: string, result: unknown): Promise<void> {
    const record = this.#held(key, owner, SETTLEABLE);
    record.state = 'completed';
    record.result = result;
    record.updatedAt = new Date(this.#now());
  }

  async fail(key: string, owner: string, error: StoredFailure): Promise<void> {
    const record = this.#held(key, owner, SETTLEABLE);
    this.#update(
      record,
      { state: 'failed', error: { code: error.code, message: error.message } },
      this.#now(),
    );
  }

  async markInDoubt(key: string, owner: string): Promise<void> {
    const record = this.#held(key, owner, SETTLEABLE);
    this.#update(record, { state: 'in_doubt' }, this.#now());
  }

  async release(key: string, owner: string): Promise<void> {
    this.#held(key, owner, LIVE);
    this.#records.delete(key);
  }

  async get(key: string): Promise<IdempotencyRecord | undefined> {
    const record = this.#records.get(key);
    return record && { ...record };
  }

  async resolve(
    key: string,
    resolution: InDoubtResolution,
  ): Promise<IdempotencyRecord | undefined> {
    const record = this.#records.get(key);
    if (record?.state !== 'in_doubt') throw notInDoubt(key, record?.state);
    if (resolution.state === 'released') {
      this.#records.delete(key);
      return undefined;
    }
    const now = this.#now();
    if (resolution.state === 'completed') {
      this.#update(record, { state: 'completed', result: resolution.result }, now);
    } else {
      this.#update(record, { state: 'failed', error: { ...resolution.error } }, now);
    }
    return { ...record };
  }

  #held(key: string, owner: string, states: readonly IdempotencyState[]): IdempotencyRecord {
    const record = this.#records.get(key);
    if (record === undefined || record.owner !== owner || !states.includes(record.state)) {
      throw notHeld(key, owner, record);
    }
    return record;
  }

  #update(record: IdempotencyRecord, changes: Partial<IdempotencyRecord>, now: number): void {
    Object.assign(record, changes, { updatedAt: new Date(now) });
  }
}

// The states an owner may move its key on from: to executing (or release it), and to an outcome.
const LIVE: readonly IdempotencyState[] = ['reserved', 'executing'];
const SETTLEABLE: readonly IdempotencyState[] = ['reserved', 'executing', 'in_doubt'];

function expired(record: IdempotencyRecord, now: number): boolean {
  return record.leaseExpiresAt.getTime() <= now;
}

/** `idempotency_conflict`: `owner` no longer holds `key` (taken over, resolved, or never held). */
export function notHeld(
  key: string,
  owner: string,
  record: Pick<IdempotencyRecord, 'owner' | 'state'> | undefined,
): VeridexError {
  const now = record
    ? `is ${record.state}${record.owner === owner ? '' : ' under another owner'}`
    : 'does not exist';
  return new VeridexError(
    'idempotency_conflict',
    `Idempotency key ${key} is not held by this execution (it ${now}). Another execution took it over or an operator resolved it; do not repeat the side effect.`,
    { details: { key, state: record?.state } },
  );
}

/** `idempotency_conflict` for resolving a key that is not in doubt. */
export function notInDoubt(key: string, state: IdempotencyState | undefined): VeridexError {
  return new VeridexError(
    'idempotency_conflict',
    `Idempotency key ${key} is ${state ?? 'unknown'}, not in_doubt; only in-doubt keys can be resolved.`,
    { details: { key, state } },
  );
}
