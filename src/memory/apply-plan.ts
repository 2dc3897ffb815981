import type { Queryable } from '../db/index.js';
import type { WritePlan } from './plan-writes.js';
import { type RecordRow, recordToRow, rowToRecord } from './record-row.js';
import { COUNT_TERMS, INSERT_LINKS, INVALIDATE, insertRecords, REINFORCE } from './sql.js';
import type { MemoryRecord } from './types.js';
import type { VectorIndex } from './vector-index.js';

/**
 * Applies a write plan inside its transaction, in the order the current-version index needs:
 * invalidate old versions, insert new ones, link, reinforce duplicates. Each step is one
 * statement over a JSON array, so a batch of any size costs four round trips.
 *
 * @returns The records invalidated by this plan, by id (as they are now).
 */
export async function applyPlan(
  tx: Queryable,
  plan: WritePlan,
  index: VectorIndex,
): Promise<Map<string, MemoryRecord>> {
  const invalidated = new Map<string, MemoryRecord>();
  if (plan.invalidations.length > 0) {
    const { rows } = await tx.query<RecordRow>(INVALIDATE, [JSON.stringify(plan.invalidations)]);
    for (const row of rows) invalidated.set(String(row.id), rowToRecord(row));
  }
  if (plan.inserts.length > 0) {
    const rows = plan.inserts.map(({ record, columns }) => ({
      ...recordToRow(record),
      ...columns,
    }));
    await tx.query(insertRecords(index.setup.vector), [JSON.stringify(rows)]);
    await tx.query(COUNT_TERMS, [plan.inserts.map(({ record }) => record.id)]);
    for (const { record } of plan.inserts) {
      if (record.invalidatedAt) invalidated.set(record.id, record);
    }
  }
  if (plan.links.length > 0) {
    const createdAt = new Date().toISOString();
    const links = plan.links.map((link) => ({
      from_id: link.from,
      to_id: link.to,
      type: link.type,
      weight: link.weight,
      created_at: createdAt,
    }));
    await tx.query(INSERT_LINKS, [JSON.stringify(links)]);
  }
  if (plan.reinforcements.length > 0) {
    await tx.query(REINFORCE, [JSON.stringify(plan.reinforcements)]);
  }
  return invalidated;
}
