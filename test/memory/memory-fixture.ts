import { AuditLog, PostgresAuditStore, type TraceEvent } from '../../src/audit/index.js';
import type { Database } from '../../src/db/index.js';
import { MemoryManager, type MemoryManagerOptions, memoryRules } from '../../src/memory/index.js';
import { PolicyEngine, type PolicyRule } from '../../src/policy/index.js';

/** A controllable clock for decay and validity tests. */
export class TestClock {
  time: number;
  constructor(iso = '2026-03-01T12:00:00.000Z') {
    this.time = Date.parse(iso);
  }
  now = (): Date => new Date(this.time);
  advance(milliseconds: number): void {
    this.time += milliseconds;
  }
}

export const DAY = 86_400_000;

/** A manager on `db` with the built-in rules (unless `rules` is given) and a Postgres audit log. */
export function makeMemory(
  db: Database,
  options: Partial<MemoryManagerOptions> & { rules?: PolicyRule[] } = {},
) {
  const audit = new AuditLog({ store: new PostgresAuditStore(db) });
  const policy = new PolicyEngine({
    audit,
    rules: options.rules ?? [
      memoryRules.denySecrets(),
      memoryRules.toolSourcedWrites('deny'),
      memoryRules.minConfidence(0.3),
    ],
  });
  const { rules: _rules, ...rest } = options;
  const memory = new MemoryManager({ db, policy, audit, ...rest });
  return { memory, audit, policy };
}

/** The types of a thread's audit events, in order. */
export async function eventTypes(audit: AuditLog, threadId: string): Promise<string[]> {
  return (await audit.events(threadId)).map((event: TraceEvent) => event.type);
}

/** How many rows the records table holds. */
export async function countRecords(db: Database): Promise<number> {
  const { rows } = await db.query<{ count: number }>(
    'SELECT count(*)::int AS count FROM veridex_memory_records',
  );
  return rows[0]!.count;
}
