import type { Queryable } from '../db/index.js';
import type { Decay } from './decay.js';
import { type RecordRow, rowToRecord } from './record-row.js';
import {
  FIND_BY_IDS,
  HISTORY,
  LINKS_OF,
  listRecords,
  REINFORCE,
  recordFilterSql,
  SqlParams,
} from './sql.js';
import type { MemoryLink, MemoryRecord, RecallHit } from './types.js';

/** Record versions by id (unknown ids are left out). */
export async function recordsById(db: Queryable, ids: readonly string[]): Promise<MemoryRecord[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<RecordRow>(FIND_BY_IDS, [ids]);
  return rows.map(rowToRecord);
}

/** Links from or to the given records. */
export async function linksOf(db: Queryable, ids: readonly string[]): Promise<MemoryLink[]> {
  const { rows } = await db.query<{
    from_id: string;
    to_id: string;
    type: MemoryLink['type'];
    weight: number;
  }>(LINKS_OF, [ids]);
  return rows.map((row) => ({
    from: row.from_id,
    to: row.to_id,
    type: row.type,
    weight: Number(row.weight),
  }));
}

/**
 * Every version of `record`'s key, plus the records any of them superseded or was superseded
 * by under another key; oldest first.
 */
export async function historyOf(db: Queryable, record: MemoryRecord): Promise<MemoryRecord[]> {
  const lineage = (
    await db.query<RecordRow>(HISTORY, [record.namespace.join('.'), record.key])
  ).rows.map(rowToRecord);
  const ids = new Set(lineage.map((entry) => entry.id));
  const superseding = (await linksOf(db, [...ids])).filter((link) => link.type === 'supersedes');
  const others = [...new Set(superseding.flatMap((link) => [link.from, link.to]))].filter(
    (other) => !ids.has(other),
  );
  return [...lineage, ...(await recordsById(db, others))].sort(
    (a, b) => a.storedAt.localeCompare(b.storedAt) || a.version - b.version,
  );
}

/** Current procedural records under a namespace prefix, ordered by name. */
export async function currentProcedures(
  db: Queryable,
  namespace: readonly string[],
): Promise<MemoryRecord[]> {
  const params = new SqlParams();
  const where = recordFilterSql(
    { namespacePath: namespace.join('.'), tiers: ['procedural'] },
    params,
  );
  const { rows } = await db.query<RecordRow>(
    listRecords(where, params.add(1000), params.add(0)),
    params.values,
  );
  return rows
    .map(rowToRecord)
    .sort(
      (a, b) =>
        a.key.localeCompare(b.key) || a.namespace.join('.').localeCompare(b.namespace.join('.')),
    );
}

/** Reinforces the recalled, still valid records of decaying tiers (their decay clock restarts). */
export async function reinforceHits(
  db: Queryable,
  hits: readonly RecallHit[],
  decay: Decay,
  now: Date,
): Promise<void> {
  const updates = hits
    .filter((hit) => decay.tiers.has(hit.record.tier) && !hit.record.invalidatedAt)
    .map(({ record }) => ({
      id: record.id,
      strength: decay.reinforced(record.tier, record.strength, record.reinforcedAt, now),
      reinforced_at: now.toISOString(),
    }));
  if (updates.length > 0) await db.query(REINFORCE, [JSON.stringify(updates)]);
}
