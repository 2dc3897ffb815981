import type { ApprovalRequest } from './types.js';

/**
 * Persistence for approval requests. `update` must run `mutate` while holding the request
 * exclusively (a row lock in PostgreSQL), so concurrent decisions never interleave. A store
 * shared by several processes also lends them its clock (`clock`, and the time it passes to
 * `mutate`), so that every process judges deadlines and dates decisions alike, whatever its
 * own clock says.
 */
export interface ApprovalStore {
  /** Stores `request` unless one with its id exists; returns the stored one either way. */
  insertIfAbsent(request: ApprovalRequest): Promise<ApprovalRequest>;
  get(id: string): Promise<ApprovalRequest | undefined>;
  /**
   * Locks the request, lets `mutate` compute its next state, stores it if changed. `storeNow`
   * is the store's clock when the request was read (the database's), or `undefined` for a
   * store without a shared clock. Returns `undefined` when no request has this id.
   */
  update<T>(
    id: string,
    mutate: (
      current: ApprovalRequest,
      storeNow: Date | undefined,
    ) => {
      next: ApprovalRequest | undefined;
      result: T;
      /**
       * The run that applied this decision continues itself (a resume payload): when it
       * resolves the request, record it resumed in the same write, so no resumer takes it too.
       */
      resumedInGraph?: boolean;
    },
  ): Promise<T | undefined>;
  /** The store's clock, when it has one every process shares (a database's). */
  clock?(): Promise<Date>;
  /** Pending requests (optionally of one thread), oldest first. */
  listPending(threadId?: string): Promise<ApprovalRequest[]>;
  /** All requests of a thread, oldest first. */
  listByThread(threadId: string): Promise<ApprovalRequest[]>;
}
