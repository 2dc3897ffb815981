import {
  type AppendEventInput,
  type AuditLog,
  contentHash,
  deriveEventId,
} from '../audit/index.js';
import type { MemoryWriteProposal, PolicyDecision } from '../policy/index.js';
import type { MemoryRecord } from './types.js';

/** Collects a batch's audit events and appends them per thread (ids are replay-safe). */
export class MemoryAudit {
  readonly #audit: AuditLog | undefined;
  readonly #events: AppendEventInput[] = [];
  readonly #weakened: readonly string[];

  constructor(audit: AuditLog | undefined, weakenedGuards: readonly string[] = []) {
    this.#audit = audit;
    this.#weakened = weakenedGuards;
  }

  /** `memory_written` for a stored (or duplicate) write. */
  written(
    proposal: MemoryWriteProposal,
    record: MemoryRecord,
    status: 'written' | 'rejected_by_conflict' | 'duplicate',
    decision: PolicyDecision | undefined,
  ): void {
    this.#push(
      record,
      proposal.threadId,
      deriveEventId(proposal.threadId, 'memory_written', proposal.writeId),
      'memory_written',
      {
        writeId: proposal.writeId,
        proposalHash: proposal.hash,
        status,
        recordId: record.id,
        tier: record.tier,
        namespace: record.namespace,
        key: record.key,
        version: record.version,
        contentHash: contentHash(record.content),
        confidence: record.confidence,
        source: record.provenance.source,
        trust: record.provenance.trust,
        ...(decision ? { ruleId: decision.ruleId } : {}),
        ...(this.#weakened.length > 0 ? { weakenedGuards: [...this.#weakened] } : {}),
      },
    );
  }

  /** `memory_invalidated` for a record the `writer` record's write invalidated (or a conflict loser). */
  invalidated(writer: MemoryRecord, record: MemoryRecord): void {
    const { threadId, writeId } = writer.provenance;
    this.#push(
      writer,
      threadId,
      deriveEventId(threadId, 'memory_invalidated', record.id, writeId),
      'memory_invalidated',
      {
        recordId: record.id,
        key: record.key,
        version: record.version,
        invalidatedBy: record.invalidatedBy,
        reason: record.invalidationReason,
        writeId,
      },
    );
  }

  /** `security_event` for a denied write (memory poisoning or secret leakage attempt). */
  denied(proposal: MemoryWriteProposal, decision: PolicyDecision): void {
    this.#events.push({
      threadId: proposal.threadId,
      runId: proposal.runId,
      eventId: deriveEventId(
        proposal.threadId,
        'security_event',
        'memory_write_denied',
        proposal.writeId,
      ),
      type: 'security_event',
      payload: {
        kind: 'memory_write_denied',
        writeId: proposal.writeId,
        proposalHash: proposal.hash,
        source: proposal.source,
        ruleId: decision.ruleId,
        reason: decision.verdict === 'deny' ? decision.reason : '',
      },
    });
  }

  /** Appends everything collected, one atomic append per thread. */
  async flush(): Promise<void> {
    const events = this.#events.splice(0);
    if (!this.#audit || events.length === 0) return;
    const byThread = new Map<string, AppendEventInput[]>();
    for (const event of events) {
      const list = byThread.get(event.threadId) ?? [];
      list.push(event);
      byThread.set(event.threadId, list);
    }
    for (const list of byThread.values()) await this.#audit.appendMany(list);
  }

  #push(
    /** The record whose provenance (run, turn) the event belongs to. */
    record: MemoryRecord,
    threadId: string,
    eventId: string,
    type: 'memory_written' | 'memory_invalidated',
    payload: Record<string, unknown>,
  ): void {
    this.#events.push({
      threadId,
      runId: record.provenance.runId,
      turnIndex: record.provenance.turn,
      eventId,
      type,
      payload,
    });
  }
}
