/**
 * Who may use a PGlite instance's one session right now. PGlite has a single PostgreSQL
 * session; once it is shared with other processes through a socket, the holder's own
 * checkouts and each socket client must take turns a whole transaction (or statement batch)
 * at a time, or one side's statements would run inside the other's transaction.
 *
 * First come, first served. `acquire` is re-entrant only for the same owner object, so every
 * in-process checkout passes a fresh object while a socket connection passes its own id.
 */
export class SessionGate {
  #owner: unknown;
  #foreignUse = false;
  readonly #waiting: Array<{ owner: unknown; admit: () => void }> = [];

  /** Resolves once `owner` holds the session. */
  acquire(owner: unknown): Promise<void> {
    if (this.#owner === owner) return Promise.resolve();
    if (this.#owner === undefined) {
      this.#owner = owner;
      return Promise.resolve();
    }
    return new Promise((admit) => this.#waiting.push({ owner, admit }));
  }

  /** Hands the session to the next waiter. Only the current owner releases. */
  release(owner: unknown): void {
    if (this.#owner !== owner) return;
    const next = this.#waiting.shift();
    this.#owner = next?.owner;
    next?.admit();
  }

  /** Whether `owner` holds the session. */
  holds(owner: unknown): boolean {
    return this.#owner === owner;
  }

  /** Notes that a socket client ran statements (it may have changed session settings). */
  markForeignUse(): void {
    this.#foreignUse = true;
  }

  /** Whether a socket client ran statements since the last call: the holder re-applies its settings. */
  takeForeignUse(): boolean {
    const used = this.#foreignUse;
    this.#foreignUse = false;
    return used;
  }
}
