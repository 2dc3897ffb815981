import { VeridexError } from '../errors/index.js';
import type { ContextEnvelope } from './envelope.js';

/** One envelope as the ledger holds it. */
export interface LedgerEntry<Payload = unknown> {
  envelope: ContextEnvelope<Payload>;
  /** ISO 8601 time of the commit. */
  committedAt: string;
  /** True once a rollback abandoned this version; it is never the head again. */
  rolledBack: boolean;
  rollbackReason?: string;
}

/** Options for {@link ContextLedger.prune}. */
export interface PruneOptions {
  /** How many of the newest versions to keep (rolled-back ones included). */
  keepLast: number;
  /** Versions referenced from elsewhere (graph state, a checkpoint) that must stay. */
  keep?: readonly number[];
}

/**
 * An append-only history of verified hand-off envelopes, one ledger per `ledgerId` (usually
 * the thread). Versions only grow; an envelope is never edited or replaced. The head is the
 * newest version not rolled back — the last valid state to return to. Store envelopes only
 * after `verifyEnvelope` accepted them (`handoffNode` does both).
 */
export interface ContextLedger {
  /**
   * Appends `envelope` as the new head. Committing the same envelope again is a no-op (a
   * re-run LangGraph node is safe).
   * @throws VeridexError `envelope_invalid` (reason `version_conflict`) for another envelope
   * with the same version, or (`version_not_monotonic`) for a version not above every stored one.
   */
  commit<Payload>(
    ledgerId: string,
    envelope: ContextEnvelope<Payload>,
  ): Promise<LedgerEntry<Payload>>;
  /** The last valid envelope, or undefined when there is none. */
  head<Payload = unknown>(ledgerId: string): Promise<ContextEnvelope<Payload> | undefined>;
  /** The entry for `version`, or undefined (never committed, or pruned). */
  get<Payload = unknown>(
    ledgerId: string,
    version: number,
  ): Promise<LedgerEntry<Payload> | undefined>;
  /** Every stored entry, oldest first. */
  list<Payload = unknown>(ledgerId: string): Promise<LedgerEntry<Payload>[]>;
  /** Abandons the head and returns the new head (the previous valid envelope), or undefined. */
  rollback<Payload = unknown>(
    ledgerId: string,
    reason?: string,
  ): Promise<ContextEnvelope<Payload> | undefined>;
  /** One above the highest version ever stored (0 for an empty ledger). */
  nextVersion(ledgerId: string): Promise<number>;
  /**
   * Deletes old entries, keeping the newest `keepLast`, the head, the highest version, the
   * `keep` versions and every version a kept envelope names in `parents` (transitively).
   * Returns the deleted versions.
   */
  prune(ledgerId: string, options: PruneOptions): Promise<number[]>;
}

/** The versions {@link ContextLedger.prune} deletes, given every entry newest first. */
export function versionsToPrune(
  newestFirst: ReadonlyArray<{ version: number; parents: readonly number[]; rolledBack: boolean }>,
  options: PruneOptions,
): number[] {
  if (!Number.isInteger(options.keepLast) || options.keepLast < 0) {
    throw new VeridexError(
      'config_invalid',
      `keepLast must be a non-negative integer; got ${options.keepLast}.`,
    );
  }
  const kept = new Set<number>(options.keep ?? []);
  for (const entry of newestFirst.slice(0, options.keepLast)) kept.add(entry.version);
  // The highest version always stays: it is what keeps versions growing after a prune.
  if (newestFirst[0]) kept.add(newestFirst[0].version);
  const head = newestFirst.find((entry) => !entry.rolledBack);
  if (head) kept.add(head.version);
  const pruned: number[] = [];
  // Parents are older than their children, so one newest-first pass closes over them.
  for (const entry of newestFirst) {
    if (kept.has(entry.version)) for (const parent of entry.parents) kept.add(parent);
    else pruned.push(entry.version);
  }
  return pruned;
}

/** The checks every ledger makes before appending; returns the existing entry for a repeat. */
export function checkCommit<Entry extends { envelope: ContextEnvelope }>(
  envelope: ContextEnvelope,
  existing: Entry | undefined,
  maxVersion: number | undefined,
): Entry | undefined {
  if (existing) {
    if (existing.envelope.signature === envelope.signature) return existing;
    throw conflict(
      'version_conflict',
      `Version ${envelope.version} is already in the ledger with different contents; envelopes are never replaced. Seal the new state with ledger.nextVersion().`,
      envelope.version,
    );
  }
  if (maxVersion !== undefined && envelope.version <= maxVersion) {
    throw conflict(
      'version_not_monotonic',
      `Version ${envelope.version} is not above the ledger's highest version ${maxVersion}; versions only grow (also after a rollback). Seal with ledger.nextVersion().`,
      envelope.version,
    );
  }
  return undefined;
}

function conflict(
  reason: 'version_conflict' | 'version_not_monotonic',
  message: string,
  version: number,
): VeridexError {
  return new VeridexError('envelope_invalid', message, { details: { reason, version } });
}
