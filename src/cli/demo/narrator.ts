import type { CliIo } from '../io.js';

/** Thrown when the demo observes something other than what the scenario promises. */
export class DemoDeviation extends Error {}

/** Prints the demo's story and checks each promise it makes. */
export class Narrator {
  readonly #io: CliIo;
  #step = 0;

  constructor(io: CliIo) {
    this.#io = io;
  }

  /** Starts a numbered step. */
  step(title: string): void {
    this.#step += 1;
    this.#io.out('');
    this.#io.out(`${this.#step}. ${title}`);
  }

  /** An indented line of narration. */
  say(text: string): void {
    this.#io.out(`   ${text}`);
  }

  /** A checked promise: prints ✓, or stops the demo with a deviation. */
  expect(condition: boolean, promise: string, observed?: string): void {
    if (!condition)
      throw new DemoDeviation(`${promise}${observed ? ` — observed: ${observed}` : ''}`);
    this.#io.out(`   ✓ ${promise}`);
  }
}
