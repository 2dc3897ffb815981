import type { ApprovalStore } from './approval-store.js';
import type { ApprovalRequest } from './types.js';

/** An {@link ApprovalStore} in process memory, for tests and single-process quick starts. */
export class MemoryApprovalStore implements ApprovalStore {
  readonly #requests = new Map<string, ApprovalRequest>();

  async insertIfAbsent(request: ApprovalRequest): Promise<ApprovalRequest> {
    const existing = this.#requests.get(request.id);
    if (existing) return structuredClone(existing);
    this.#requests.set(request.id, structuredClone(request));
    return structuredClone(request);
  }

  async get(id: string): Promise<ApprovalRequest | undefined> {
    const request = this.#requests.get(id);
    return request && structuredClone(request);
  }

  async update<T>(
    id: string,
    mutate: (
      current: ApprovalRequest,
      storeNow: Date | undefined,
    ) => { next: ApprovalRequest | undefined; result: T; resumedInGraph?: boolean },
  ): Promise<T | undefined> {
    const current = this.#requests.get(id);
    if (!current) return undefined;
    // Synchronous from here: no other update can interleave. One process, one clock: none lent.
    const { next, result } = mutate(structuredClone(current), undefined);
    if (next) this.#requests.set(id, structuredClone(next));
    return result;
  }

  async listPending(threadId?: string): Promise<ApprovalRequest[]> {
    return [...this.#requests.values()]
      .filter(
        (request) => request.status === 'pending' && (!threadId || request.threadId === threadId),
      )
      .map((request) => structuredClone(request));
  }

  async listByThread(threadId: string): Promise<ApprovalRequest[]> {
    return [...this.#requests.values()]
      .filter((request) => request.threadId === threadId)
      .map((request) => structuredClone(request));
  }
}
