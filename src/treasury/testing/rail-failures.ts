/** A failure a payment-rail double injects into its next `execute`. */
export interface InjectedFailure {
  error: Error;
  /** Record the execution first, then throw: the money moved but the answer was lost. */
  afterRecording: boolean;
}

/** The queue of injected failures shared by the rail doubles. */
export class RailFailures {
  readonly #queue: InjectedFailure[] = [];

  push(error: Error, options: { afterRecording?: boolean } = {}): void {
    this.#queue.push({ error, afterRecording: options.afterRecording ?? false });
  }

  /** Runs `record` with the next injected failure applied around it. */
  async around<T>(record: () => Promise<T>): Promise<T> {
    const failure = this.#queue.shift();
    if (failure && !failure.afterRecording) throw failure.error;
    const result = await record();
    if (failure) throw failure.error;
    return result;
  }
}
