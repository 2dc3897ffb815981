/**
 * At most `size` holders at once: the egress proxy's bound on the upstream requests it has in
 * flight. Waiters are served in arrival order; one whose signal aborts leaves the queue.
 */
export class RequestSlots {
  #free: number;
  readonly #waiting: Array<() => void> = [];

  constructor(size: number) {
    this.#free = size;
  }

  /**
   * Resolves with a release function once a slot is free (calling it more than once releases
   * once). Rejects with the signal's reason if it aborts first.
   */
  acquire(signal: AbortSignal): Promise<() => void> {
    signal.throwIfAborted();
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free++;
    };
    if (this.#free > 0) {
      this.#free--;
      return Promise.resolve(release);
    }
    return new Promise((resolve, reject) => {
      const granted = () => {
        signal.removeEventListener('abort', gaveUp);
        resolve(release);
      };
      const gaveUp = () => {
        const index = this.#waiting.indexOf(granted);
        if (index >= 0) this.#waiting.splice(index, 1);
        reject(signal.reason);
      };
      this.#waiting.push(granted);
      signal.addEventListener('abort', gaveUp, { once: true });
    });
  }
}
