import type { ApprovalRequest } from './types.js';

/**
 * Persistence for approval requests. `update` must run `mutate` while holding the request
 * exclusively (a row lock in PostgreSQL), so concurrent decisions never interleave.
 */
export interface ApprovalStore {
  /** Stores `request` unless one with its id exists; returns the stored one either way. */
  insertIfAbsent(request: ApprovalRequest): Promise<ApprovalRequest>;
  get(id: string): Promise<ApprovalRequest | undefined>;
  /**
   * Locks the request, lets `mutate` compute its next state, stores it if changed.
   * Returns `undefined` when no request has this id.
   */
  update<T>(
    id: string,
    mutate: (current: ApprovalRequest) => { next: ApprovalRequest | undefined; result: T },
  ): Promise<T | undefined>;
  /** Pending requests (optionally of one thread), oldest first. */
  listPending(threadId?: string): Promise<ApprovalRequest[]>;
  /** All requests of a thread, oldest first. */
  listByThread(threadId: string): Promise<ApprovalRequest[]>;
}
