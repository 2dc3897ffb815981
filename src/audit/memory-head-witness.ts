import { type HeadWitness, submissionProblem, witnessRefusal } from './head-witness.js';
import type { EvidenceVerifier } from './signer.js';
import { headLog, type SignedTreeHead } from './tree-head.js';

/**
 * A witness in process memory that behaves like a real one: it accepts a head only when it is
 * signed by one of `keys` (when given) and consistent with the last head it accepted for that
 * log, and remembers every refusal. The test double for {@link HeadWitness}: a real witness
 * (another organisation, an object store, a public log) implements the same three methods.
 */
export class MemoryHeadWitness implements HeadWitness {
  readonly name: string;
  /** Every head accepted, in order. */
  readonly accepted: SignedTreeHead[] = [];
  /** Every refused submission and why. */
  readonly refused: Array<{ head: SignedTreeHead; reason: string }> = [];
  readonly #keys: readonly EvidenceVerifier[] | undefined;

  constructor(options: { name?: string; keys?: readonly EvidenceVerifier[] } = {}) {
    this.name = options.name ?? 'memory witness';
    this.#keys = options.keys;
  }

  async latest(log: string): Promise<SignedTreeHead | undefined> {
    return this.accepted.findLast((head) => headLog(head) === log);
  }

  async submit(head: SignedTreeHead, consistency: readonly string[]): Promise<void> {
    const why = submissionProblem(await this.latest(headLog(head)), head, consistency, this.#keys);
    if (why) {
      this.refused.push({ head, reason: why });
      throw witnessRefusal(this.name, head, why);
    }
    this.accepted.push(head);
  }

  async heads(): Promise<SignedTreeHead[]> {
    return [...this.accepted];
  }
}
