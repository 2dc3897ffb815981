import type { Queryable } from '../db/index.js';
import type { Decay } from './decay.js';
import { type RecordRow, rowToRecord } from './record-row.js';
import { FIND_BY_IDS, FIND_LINEAGES, recordFilterSql, SqlParams } from './sql.js';
import type {
  ConflictDetector,
  ConflictResolver,
  LinkType,
  MemoryLink,
  MemoryRecord,
} from './types.js';
import type { VectorColumns, VectorIndex } from './vector-index.js';
import type { WriteDraft } from './write-draft.js';

/** An accepted draft with its embedding. */
export interface AcceptedWrite {
  draft: WriteDraft;
  vector: readonly number[];
  columns: VectorColumns;
}

/** What one accepted write turned into. */
export type PlannedResult =
  | { status: 'written'; record: MemoryRecord; invalidated: string[]; links: MemoryLink[] }
  | {
      status: 'rejected_by_conflict';
      record: MemoryRecord;
      winner: MemoryRecord;
      links: MemoryLink[];
    }
  | { status: 'duplicate'; record: MemoryRecord };

/** Everything one transaction must apply, in order: invalidate, insert, link, reinforce. */
export interface WritePlan {
  inserts: Array<{ record: MemoryRecord; columns: VectorColumns }>;
  invalidations: Array<{
    id: string;
    invalidated_at: string;
    invalidated_by: string;
    reason: string;
  }>;
  links: MemoryLink[];
  reinforcements: Array<{ id: string; strength: number; reinforced_at: string }>;
  results: PlannedResult[];
}

/** The knobs of {@link planWrites}. */
export interface PlanOptions {
  index: VectorIndex;
  resolver: ConflictResolver;
  detector: ConflictDetector;
  decay: Decay;
  /** Similarity from which a stored record is compared with an incoming one. */
  conflictThreshold: number;
  /** Similarity from which related records are linked. */
  linkThreshold: number;
  /** Compare incoming semantic and episodic records with similar stored ones. */
  similarity: boolean;
  now: Date;
}

interface Lineage {
  current: MemoryRecord | undefined;
  maxVersion: number;
}

const lineageId = (namespace: readonly string[], key: string) =>
  `${namespace.join('.')}\u0000${key}`;

/**
 * Decides, inside the write transaction (namespaces locked), what each accepted write does:
 * a new version superseding the current one, a conflict resolved by the resolver (the loser
 * invalidated, never deleted), a duplicate that only reinforces, and which links to create.
 * Writes of one batch are applied in order, so a later write sees an earlier one's key.
 */
export async function planWrites(
  tx: Queryable,
  writes: readonly AcceptedWrite[],
  options: PlanOptions,
): Promise<WritePlan> {
  const plan: WritePlan = {
    inserts: [],
    invalidations: [],
    links: [],
    reinforcements: [],
    results: [],
  };
  const lineages = await loadLineages(
    tx,
    writes.filter((write) => write.draft.explicitKey).map((write) => write.draft.record),
  );
  const now = options.now.toISOString();
  const planned = new Map<string, MemoryRecord>();
  const existingSources = await existingIds(
    tx,
    writes.flatMap((write) => write.draft.derivedFrom),
  );

  for (const { draft, vector, columns } of writes) {
    const incoming: MemoryRecord = { ...draft.record };
    // Links are only applied if the incoming record is inserted (they reference its id).
    const links: MemoryLink[] = [];
    const link = (from: string, to: string, type: LinkType, weight: number) => {
      links.push({ from, to, type, weight: Math.max(0, Math.min(1, weight)) });
    };
    let lineage = draft.explicitKey
      ? lineages.get(lineageId(incoming.namespace, incoming.key))
      : undefined;
    let similarConflict: MemoryRecord | undefined;
    let duplicateOf: MemoryRecord | undefined;

    if (!lineage?.current && options.similarity && !draft.replaces) {
      for (const { record, similarity } of await similarRecords(tx, incoming, vector, options)) {
        const verdict =
          incoming.tier === 'semantic' ? options.detector(record, incoming, similarity) : 'related';
        if (verdict === 'duplicate' && !draft.explicitKey) {
          duplicateOf = record;
          break;
        }
        if (verdict === 'conflict' && !similarConflict) similarConflict = record;
        else if (similarity >= options.linkThreshold) {
          link(incoming.id, record.id, 'relates_to', similarity);
        }
      }
      if (similarConflict && !draft.explicitKey) {
        // The incoming fact becomes the next version of the one it contradicts.
        incoming.key = similarConflict.key;
        lineage = (await loadLineages(tx, [similarConflict])).get(
          lineageId(similarConflict.namespace, similarConflict.key),
        );
      }
    }
    if (duplicateOf) {
      plan.reinforcements.push(reinforcement(duplicateOf, options));
      plan.results.push({ status: 'duplicate', record: duplicateOf });
      continue;
    }

    const current = lineage?.current ?? similarConflict;
    if (current && sameStatement(current, incoming)) {
      plan.reinforcements.push(reinforcement(current, options));
      plan.results.push({ status: 'duplicate', record: current });
      continue;
    }
    incoming.version = (lineage?.maxVersion ?? 0) + 1;
    if (current && lineage?.current === current) incoming.createdAt = current.createdAt;
    let winner: 'incoming' | 'existing' = 'incoming';
    if (current && !draft.replaces) winner = await options.resolver(current, incoming);
    for (const source of draft.derivedFrom) {
      if (existingSources.has(source)) link(incoming.id, source, 'derived_from', 1);
    }
    if (current && winner === 'existing') {
      incoming.invalidatedAt = now;
      incoming.invalidatedBy = current.id;
      incoming.invalidationReason = 'conflict';
      link(current.id, incoming.id, 'supersedes', 1);
      plan.inserts.push({ record: incoming, columns });
      plan.links.push(...links);
      plan.results.push({
        status: 'rejected_by_conflict',
        record: incoming,
        winner: current,
        links,
      });
    } else {
      const invalidated: string[] = [];
      if (current) {
        const reason = draft.replaces ? 'superseded' : 'conflict';
        const pending = planned.get(current.id);
        if (pending) {
          // Written earlier in this batch: invalidate it before it is even inserted.
          pending.invalidatedAt = now;
          pending.invalidatedBy = incoming.id;
          pending.invalidationReason = reason;
        } else {
          plan.invalidations.push({
            id: current.id,
            invalidated_at: now,
            invalidated_by: incoming.id,
            reason,
          });
        }
        invalidated.push(current.id);
        link(incoming.id, current.id, 'supersedes', 1);
      }
      plan.inserts.push({ record: incoming, columns });
      planned.set(incoming.id, incoming);
      plan.links.push(...links);
      plan.results.push({ status: 'written', record: incoming, invalidated, links });
    }
    const key = lineageId(incoming.namespace, incoming.key);
    lineages.set(key, {
      current: incoming.invalidatedAt ? current : incoming,
      maxVersion: incoming.version,
    });
  }
  return plan;
}

function sameStatement(a: MemoryRecord, b: MemoryRecord): boolean {
  return (
    a.content === b.content &&
    (a.object ?? '') === (b.object ?? '') &&
    JSON.stringify(a.value ?? null) === JSON.stringify(b.value ?? null)
  );
}

function reinforcement(record: MemoryRecord, options: PlanOptions) {
  return {
    id: record.id,
    strength: options.decay.reinforced(
      record.tier,
      record.strength,
      record.reinforcedAt,
      options.now,
    ),
    reinforced_at: options.now.toISOString(),
  };
}

async function similarRecords(
  tx: Queryable,
  incoming: MemoryRecord,
  vector: readonly number[],
  options: PlanOptions,
): Promise<Array<{ record: MemoryRecord; similarity: number }>> {
  const params = new SqlParams();
  const filterSql = recordFilterSql(
    { namespacePath: incoming.namespace.join('.'), exactNamespace: true, tiers: [incoming.tier] },
    params,
  );
  const candidates = await options.index.candidates(tx, vector, filterSql, params, 5);
  return candidates
    .filter((candidate) => candidate.similarity >= options.conflictThreshold)
    .map((candidate) => ({ record: rowToRecord(candidate.row), similarity: candidate.similarity }));
}

async function loadLineages(
  tx: Queryable,
  records: readonly MemoryRecord[],
): Promise<Map<string, Lineage>> {
  const lineages = new Map<string, Lineage>();
  if (records.length === 0) return lineages;
  const { rows } = await tx.query<{
    namespace_path: string;
    key: string;
    max_version: number | null;
    current: RecordRow | null;
  }>(FIND_LINEAGES, [
    records.map((record) => record.namespace.join('.')),
    records.map((record) => record.key),
  ]);
  for (const row of rows) {
    lineages.set(`${row.namespace_path}\u0000${row.key}`, {
      current: row.current ? rowToRecord(row.current) : undefined,
      maxVersion: Number(row.max_version ?? 0),
    });
  }
  return lineages;
}

async function existingIds(tx: Queryable, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const { rows } = await tx.query<{ id: string }>(FIND_BY_IDS, [[...new Set(ids)]]);
  return new Set(rows.map((row) => row.id));
}
