import type { Database } from '../db/index.js';
import type { Decay } from './decay.js';
import { type RecordRow, rowToRecord } from './record-row.js';
import { LINKS_OF, type RecordFilter, recordFilterSql, recordsByIds, SqlParams } from './sql.js';
import type { LinkType, RecallHit } from './types.js';

/** A linked record scores this share of the hit it was reached from (times the link weight). */
const LINK_DAMPING = 0.5;

/**
 * Follows `relates_to` and `derived_from` links one hop from the hits (both directions) and
 * returns up to `max` linked records that are not hits themselves and that match the same
 * filter — so a link never leads out of the caller's namespace or to an invalidated record.
 * `supersedes` links are not followed: they lead to outdated versions.
 */
export async function followLinks(
  db: Database,
  hits: readonly RecallHit[],
  filter: RecordFilter,
  max: number,
  context: { decay: Decay; now: Date },
): Promise<RecallHit[]> {
  if (max <= 0 || hits.length === 0) return [];
  const byId = new Map(hits.map((hit) => [hit.record.id, hit]));
  const { rows } = await db.query<{
    from_id: string;
    to_id: string;
    type: LinkType;
    weight: number;
  }>(LINKS_OF, [[...byId.keys()]]);
  const best = new Map<string, { from: RecallHit; type: LinkType; weight: number }>();
  for (const link of rows) {
    if (link.type === 'supersedes') continue;
    const [hitId, otherId] = byId.has(link.from_id)
      ? [link.from_id, link.to_id]
      : [link.to_id, link.from_id];
    if (byId.has(otherId)) continue;
    const from = byId.get(hitId)!;
    const weight = Number(link.weight);
    const previous = best.get(otherId);
    if (!previous || previous.from.score * previous.weight < from.score * weight) {
      best.set(otherId, { from, type: link.type, weight });
    }
  }
  if (best.size === 0) return [];
  const params = new SqlParams();
  const where = recordFilterSql(filter, params);
  const records = await db.query<RecordRow>(
    recordsByIds(where, params.add([...best.keys()])),
    params.values,
  );
  return records.rows
    .map((row) => {
      const record = rowToRecord(row);
      const { from, type, weight } = best.get(record.id)!;
      const decay = context.decay.factor(
        record.tier,
        record.strength,
        record.reinforcedAt,
        context.now,
      );
      return {
        record,
        decay,
        score: from.score * weight * LINK_DAMPING * decay * record.confidence,
        via: { from: from.record.id, type },
      } satisfies RecallHit;
    })
    .sort((a, b) => b.score - a.score || a.record.id.localeCompare(b.record.id))
    .slice(0, max);
}
