import type { MemorySource } from '../policy/types.js';
import type { MemoryRecord, StoredTier, TrustLevel } from './types.js';

/** A `veridex_memory_records` row as node-postgres (or `row_to_json`) returns it. */
export type RecordRow = Record<string, unknown>;

function iso(value: unknown): string {
  return (value instanceof Date ? value : new Date(String(value))).toISOString();
}

function optionalString(value: unknown): string | undefined {
  return value === null || value === undefined ? undefined : String(value);
}

/** Maps a stored row to a {@link MemoryRecord}. */
export function rowToRecord(row: RecordRow): MemoryRecord {
  const record: MemoryRecord = {
    id: String(row.id),
    tier: row.tier as StoredTier,
    namespace: row.namespace as string[],
    key: String(row.key),
    version: Number(row.version),
    content: String(row.content),
    confidence: Number(row.confidence),
    tags: (row.tags as string[] | null) ?? [],
    provenance: {
      threadId: String(row.thread_id),
      runId: String(row.run_id),
      turn: Number(row.turn_index),
      timestamp: iso(row.observed_at),
      source: row.source as MemorySource,
      trust: row.trust as TrustLevel,
      writeId: String(row.write_id),
    },
    validFrom: iso(row.valid_from),
    createdAt: iso(row.lineage_created_at),
    storedAt: iso(row.stored_at),
    strength: Number(row.strength),
    reinforcedAt: iso(row.reinforced_at),
    recallCount: Number(row.recall_count ?? 0),
  };
  const subject = optionalString(row.subject);
  const predicate = optionalString(row.predicate);
  const object = optionalString(row.object);
  if (subject !== undefined) record.subject = subject;
  if (predicate !== undefined) record.predicate = predicate;
  if (object !== undefined) record.object = object;
  if (row.value !== null && row.value !== undefined) {
    record.value = row.value as Record<string, unknown>;
  }
  if (row.invalidated_at !== null && row.invalidated_at !== undefined) {
    record.invalidatedAt = iso(row.invalidated_at);
    const by = optionalString(row.invalidated_by);
    if (by !== undefined) record.invalidatedBy = by;
    record.invalidationReason = row.invalidation_reason as NonNullable<
      MemoryRecord['invalidationReason']
    >;
  }
  return record;
}

/** The JSON row {@link MemoryRecord} is inserted as (see `insertRecords` in sql.ts). */
export function recordToRow(record: MemoryRecord): Record<string, unknown> {
  return {
    id: record.id,
    write_id: record.provenance.writeId,
    tier: record.tier,
    namespace: record.namespace,
    namespace_path: record.namespace.join('.'),
    key: record.key,
    version: record.version,
    content: record.content,
    subject: record.subject ?? null,
    predicate: record.predicate ?? null,
    object: record.object ?? null,
    confidence: record.confidence,
    tags: record.tags,
    value: record.value ?? null,
    thread_id: record.provenance.threadId,
    run_id: record.provenance.runId,
    turn_index: record.provenance.turn,
    source: record.provenance.source,
    trust: record.provenance.trust,
    observed_at: record.provenance.timestamp,
    valid_from: record.validFrom,
    invalidated_at: record.invalidatedAt ?? null,
    invalidated_by: record.invalidatedBy ?? null,
    invalidation_reason: record.invalidationReason ?? null,
    lineage_created_at: record.createdAt,
    stored_at: record.storedAt,
    strength: record.strength,
    reinforced_at: record.reinforcedAt,
  };
}
