/**
 * Life of an idempotency key:
 * - `reserved`: claimed by an owner (with a lease); nothing external has happened yet, so an
 *   expired `reserved` lease may be taken over.
 * - `executing`: the side effect has started. If the lease expires now, nobody knows whether
 *   it happened: the key becomes `in_doubt`, never silently re-executed.
 * - `completed`: the result is stored; later calls with the key receive it without executing.
 * - `failed`: the tool failed definitively; later calls receive the stored error.
 * - `in_doubt`: the outcome is unknown (crash, timeout, cancellation while executing). Calls
 *   fail with `idempotency_in_doubt` until someone resolves the key (see `resolve`).
 */
export type IdempotencyState = 'reserved' | 'executing' | 'completed' | 'failed' | 'in_doubt';

/** A stored failure: safe to show a model (already sanitised). */
export interface StoredFailure {
  code: string;
  message: string;
}

/** One key's record. */
export interface IdempotencyRecord {
  key: string;
  state: IdempotencyState;
  /** Who holds (or last held) the reservation. */
  owner: string;
  toolName: string;
  /** What the execution under this key was (`callFingerprint`); absent in records from before it existed. */
  fingerprint?: string;
  /** When the holder's lease ends; after that a `reserved` key is free, an `executing` one in doubt. */
  leaseExpiresAt: Date;
  /** Present when `completed`. */
  result?: unknown;
  /** Present when `failed`. */
  error?: StoredFailure;
  createdAt: Date;
  updatedAt: Date;
}

/** What {@link IdempotencyStore.reserve} found. */
export type ReserveOutcome =
  | { status: 'acquired'; record: IdempotencyRecord }
  | { status: 'completed'; record: IdempotencyRecord }
  | { status: 'failed'; record: IdempotencyRecord }
  | { status: 'in_doubt'; record: IdempotencyRecord }
  /** Another owner holds a live lease: wait and ask again. */
  | { status: 'busy'; record: IdempotencyRecord };

/** Options for {@link IdempotencyStore.reserve}. */
export interface ReserveOptions {
  /** Unique per execution attempt (e.g. a random UUID); only it may move the key on. */
  owner: string;
  toolName: string;
  /** What this execution is (`callFingerprint`), stored with the key. */
  fingerprint?: string;
  /** Lease length in milliseconds; should cover the whole execution including retries. */
  leaseMs: number;
}

/** How an operator settles an in-doubt key after looking at the outside world. */
export type InDoubtResolution =
  /** It did happen: store this result; later calls receive it. */
  | { state: 'completed'; result: unknown }
  /** It did not happen (or is safe to repeat): forget the key; the next call executes. */
  | { state: 'released' }
  /** It did not happen and must not be retried: later calls receive this error. */
  | { state: 'failed'; error: StoredFailure };

/**
 * At-most-once execution per key: reserve → markExecuting → commit (or fail / markInDoubt /
 * release). Implementations: `MemoryIdempotencyStore` (one process) and
 * `PostgresIdempotencyStore` (many processes; row locks decide concurrent reservations).
 * State-changing calls by an owner who no longer holds the key fail with `idempotency_conflict`.
 */
export interface IdempotencyStore {
  /** Claims `key`, or reports why not (completed, failed, in doubt, busy). */
  reserve(key: string, options: ReserveOptions): Promise<ReserveOutcome>;
  /** Marks the start of the side effect and renews the lease. */
  markExecuting(key: string, owner: string, leaseMs: number): Promise<void>;
  /** Stores the result (allowed from `reserved`, `executing`, or `in_doubt` by the same owner). */
  commit(key: string, owner: string, result: unknown): Promise<void>;
  /** Stores a definitive failure. */
  fail(key: string, owner: string, error: StoredFailure): Promise<void>;
  /** Records that the outcome is unknown (timeout or cancellation while executing). */
  markInDoubt(key: string, owner: string): Promise<void>;
  /** Gives the key up without an outcome (e.g. an interrupt before anything happened). */
  release(key: string, owner: string): Promise<void>;
  /** The key's record, if any. */
  get(key: string): Promise<IdempotencyRecord | undefined>;
  /**
   * Settles an `in_doubt` key (operators, reconciliation jobs).
   * @throws VeridexError `idempotency_conflict` if the key is not in doubt.
   */
  resolve(key: string, resolution: InDoubtResolution): Promise<IdempotencyRecord | undefined>;
}
