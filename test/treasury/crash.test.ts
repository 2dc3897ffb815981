import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase, type Database, migrate } from '../../src/db/index.js';
import { DatabasePaymentRail, PostgresCeilingStore } from '../../src/treasury/index.js';
import { postgresUrl, uniqueSchema } from '../support/databases.js';
import {
  type CrashConfig,
  type CrashTransfer,
  KILL_POINTS,
  type KillPoint,
  keyOf,
} from './fixtures/crash-plan.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const child = fileURLToPath(new URL('./fixtures/crash-child.ts', import.meta.url));

// One backend per run: the local PostgreSQL when DATABASE_URL is set, else a PGlite data
// directory on disk (which only one process may open at a time — hence one child at a time).
const schema = uniqueSchema();
const dataDir = postgresUrl ? undefined : mkdtempSync(join(tmpdir(), 'veridex-crash-'));
const database = postgresUrl ? { url: postgresUrl, schema } : { dataDir: dataDir! };

interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}

function runChild(
  config: CrashConfig,
  points: Record<string, KillPoint> = {},
): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const process_ = spawn(process.execPath, ['--import', 'tsx', child, JSON.stringify(config)], {
      cwd: root,
      env: { ...process.env, VERIDEX_KILL_POINTS: JSON.stringify(points) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    process_.stdout.on('data', (chunk) => (output += chunk));
    process_.stderr.on('data', (chunk) => (output += chunk));
    process_.on('error', reject);
    process_.on('close', (code, signal) => resolve({ code, signal, output }));
  });
}

interface TrialResult {
  id: string;
  first: string;
  reconciled?: 'executed' | 'not_executed';
  inDoubtRequests: number;
  pendingAfter: number;
  final: string;
  evidenceValid: boolean;
  evidenceComplete: boolean;
  ledger?: string;
}

/** Where the ledger says the executor may have run but nothing tells whether it did. */
const AMBIGUOUS: readonly KillPoint[] = ['before_executor', 'after_executor'];

afterAll(async () => {
  if (postgresUrl) {
    const db = await createDatabase({ url: postgresUrl, schema });
    await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await db.close();
  } else if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe(`a transfer process killed with SIGKILL at each pipeline step [${postgresUrl ? 'postgres' : 'pglite on disk'}]`, () => {
  const rounds = [
    { round: 1, timeLockMs: 0, amount: (i: number) => `${1000 + i}.00` },
    { round: 2, timeLockMs: 25, amount: (i: number) => `${20_000 + i}.50` },
  ];
  const trials: CrashTransfer[] = [];
  const points: Record<string, KillPoint> = {};

  it('pays every approved transfer exactly once, with and without executor lookup', async () => {
    for (const { round, timeLockMs, amount } of rounds) {
      const transfers: CrashTransfer[] = [];
      KILL_POINTS.forEach((point, index) => {
        for (const lookup of [true, false]) {
          const id = `r${round}-${point}-${lookup ? 'lookup' : 'nolookup'}`;
          transfers.push({ id, lookup, amount: amount(index) });
          points[id] = point;
        }
      });
      const roundPoints = Object.fromEntries(transfers.map((t) => [t.id, points[t.id]!]));
      const killed = await runChild(
        { phase: 'kill', database, transfers, timeLockMs },
        roundPoints,
      );
      expect(killed.signal, killed.output).toBe('SIGKILL');

      const resumed = await runChild({ phase: 'resume', database, transfers, timeLockMs });
      expect(resumed.code, resumed.output).toBe(0);
      const line = resumed.output.split('\n').find((text) => text.startsWith('RESULT '));
      const results = JSON.parse(line!.slice('RESULT '.length)) as TrialResult[];
      expect(results.map((r) => r.id)).toEqual(transfers.map((t) => t.id));
      for (const [index, result] of results.entries()) {
        const transfer = transfers[index]!;
        const point = points[transfer.id]!;
        const ambiguous = !transfer.lookup && AMBIGUOUS.includes(point);
        const expected = {
          id: transfer.id,
          // Only a rail that cannot be asked leaves a crash inside the executor in doubt.
          first: ambiguous ? 'transfer_in_doubt' : 'success',
          inDoubtRequests: ambiguous ? 1 : 0,
          pendingAfter: 0,
          final: 'success',
          evidenceValid: true,
          evidenceComplete: true,
          ledger: 'committed',
          ...(ambiguous
            ? { reconciled: point === 'after_executor' ? 'executed' : 'not_executed' }
            : {}),
        };
        expect(result).toEqual(expected);
      }
      trials.push(...transfers);
    }
    expect(trials).toHaveLength(40);

    // The durable rail is the ground truth: one execution per approved transfer.
    const db: Database = postgresUrl
      ? await createDatabase({ url: postgresUrl, schema })
      : await createDatabase({ dataDir: dataDir! });
    try {
      await migrate(db);
      const executions = await new DatabasePaymentRail(db).executions();
      const perKey = new Map<string, number>();
      for (const execution of executions) {
        perKey.set(execution.idempotencyKey, (perKey.get(execution.idempotencyKey) ?? 0) + 1);
      }
      const ceilings = new PostgresCeilingStore(db);
      for (const transfer of trials) {
        expect(perKey.get(keyOf(transfer.id)), transfer.id).toBe(1);
        const ledger = await ceilings.get(keyOf(transfer.id));
        expect(ledger?.receipt?.reference, transfer.id).toBe(
          executions.find((e) => e.idempotencyKey === keyOf(transfer.id))?.receipt.reference,
        );
      }
      expect(executions).toHaveLength(trials.length);
    } finally {
      await db.close();
    }
  }, 240_000);
});
