import {
  type ContextLedger,
  checkCommit,
  type LedgerEntry,
  type PruneOptions,
  versionsToPrune,
} from './context-ledger.js';
import { type ContextEnvelope, envelopeFields } from './envelope.js';

/**
 * A {@link ContextLedger} in process memory, for tests and quick starts (lost on exit).
 * Entries are copied in and out, so callers cannot edit what is stored.
 *
 * @example
 * const ledger = new MemoryContextLedger();
 * await ledger.commit('thread-1', envelope);
 * await ledger.head('thread-1'); // envelope
 */
export class MemoryContextLedger implements ContextLedger {
  readonly #ledgers = new Map<string, LedgerEntry[]>();

  async commit<Payload>(
    ledgerId: string,
    envelope: ContextEnvelope<Payload>,
  ): Promise<LedgerEntry<Payload>> {
    const entries = this.#entries(ledgerId);
    const existing = entries.find((entry) => entry.envelope.version === envelope.version);
    const repeat = checkCommit(envelope, existing, entries.at(-1)?.envelope.version);
    if (repeat) return structuredClone(repeat) as LedgerEntry<Payload>;
    const entry: LedgerEntry = {
      envelope: structuredClone(envelopeFields(envelope)),
      committedAt: new Date().toISOString(),
      rolledBack: false,
    };
    entries.push(entry);
    return structuredClone(entry) as LedgerEntry<Payload>;
  }

  async head<Payload = unknown>(ledgerId: string): Promise<ContextEnvelope<Payload> | undefined> {
    const entry = this.#entries(ledgerId).findLast((candidate) => !candidate.rolledBack);
    return entry ? (structuredClone(entry.envelope) as ContextEnvelope<Payload>) : undefined;
  }

  async get<Payload = unknown>(
    ledgerId: string,
    version: number,
  ): Promise<LedgerEntry<Payload> | undefined> {
    const entry = this.#entries(ledgerId).find(
      (candidate) => candidate.envelope.version === version,
    );
    return entry ? (structuredClone(entry) as LedgerEntry<Payload>) : undefined;
  }

  async list<Payload = unknown>(ledgerId: string): Promise<LedgerEntry<Payload>[]> {
    return structuredClone(this.#entries(ledgerId)) as LedgerEntry<Payload>[];
  }

  async rollback<Payload = unknown>(
    ledgerId: string,
    reason?: string,
  ): Promise<ContextEnvelope<Payload> | undefined> {
    const head = this.#entries(ledgerId).findLast((candidate) => !candidate.rolledBack);
    if (head) {
      head.rolledBack = true;
      if (reason !== undefined) head.rollbackReason = reason;
    }
    return this.head<Payload>(ledgerId);
  }

  async nextVersion(ledgerId: string): Promise<number> {
    return (this.#entries(ledgerId).at(-1)?.envelope.version ?? -1) + 1;
  }

  async prune(ledgerId: string, options: PruneOptions): Promise<number[]> {
    const entries = this.#entries(ledgerId);
    const pruned = versionsToPrune(
      [...entries].reverse().map((entry) => ({
        version: entry.envelope.version,
        parents: entry.envelope.parents ?? [],
        rolledBack: entry.rolledBack,
      })),
      options,
    );
    const gone = new Set(pruned);
    this.#ledgers.set(
      ledgerId,
      entries.filter((entry) => !gone.has(entry.envelope.version)),
    );
    return pruned.sort((a, b) => a - b);
  }

  #entries(ledgerId: string): LedgerEntry[] {
    let entries = this.#ledgers.get(ledgerId);
    if (!entries) {
      entries = [];
      this.#ledgers.set(ledgerId, entries);
    }
    return entries;
  }
}
