// A soak worker: claims threads from the run's queue and advances each one as far as it goes
// (start, resume after approvals, or continue a step a crash cut short), `concurrency` at a
// time, until told to stop. Killed with SIGKILL at random by the coordinator.
import type { RunnableConfig } from '@langchain/core/runnables';
import { isConnectionError } from '../../src/db/db-errors.js';
import { createDatabase } from '../../src/db/index.js';
import { VeridexError } from '../../src/errors/index.js';
import { isThreadFinished, resumeThread } from '../../src/nodes/index.js';
import { buildSoakStack, type NodeSample, startMessage, type ThreadSpec } from './graph.js';
import type { AdvanceOutcome, WorkerConfig, WorkerReport } from './protocol.js';
import { CLAIM_THREADS, OWNED_THREADS, RELEASE_THREAD } from './sql.js';

const config = JSON.parse(process.env.SOAK_WORKER ?? '{}') as WorkerConfig;
const samples: NodeSample[] = [];
const advances: AdvanceOutcome[] = [];
const db = await createDatabase({ url: config.url, maxConnections: 8 });
const stack = await buildSoakStack({
  db,
  evidenceKey: new Uint8Array(Buffer.from(config.evidenceKeyHex, 'hex')),
  evidenceDir: config.evidenceDir,
  approvalTimeoutMs: config.approvalTimeoutMs,
  onSample: (sample) => samples.push(sample),
});
const { graph } = stack;
const active = new Map<string, Promise<void>>();
let stopping = false;

process.on('message', (message: { type?: string }) => {
  if (message?.type === 'stop') stopping = true;
});
// Connection errors surface through the calls that hit them; an unhandled one must not end the
// worker silently (the coordinator would count it as a crash and restart it).
process.on('unhandledRejection', (error) => {
  console.error(`worker ${config.token}: unhandled rejection`, error);
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Conditions that pass: the database is back soon, a dead worker's lease runs out. */
function transient(error: unknown): boolean {
  return VeridexError.is(error, 'db_unavailable', 'idempotency_busy') || isConnectionError(error);
}

type Row = ThreadSpec & { state: string; fate: string; seq: number; retries: number };

/** Runs the thread until it suspends, finishes or fails; never throws. */
async function advance(row: Row): Promise<AdvanceOutcome> {
  const start = performance.now();
  const threadConfig = { configurable: { thread_id: row.id }, durability: 'sync' as const };
  let kind: AdvanceOutcome['kind'] = 'none';
  try {
    const state = await graph.getState(threadConfig);
    let result: unknown;
    if (state.createdAt === undefined && state.tasks.length === 0) {
      kind = 'start';
      result = await graph.invoke({ messages: [startMessage(row)] }, threadConfig);
    } else if (state.tasks.some((task) => (task.interrupts ?? []).length > 0)) {
      kind = 'resume';
      // `durability` is an invoke option LangGraph reads from the config resumeThread passes on.
      result = await resumeThread(graph, row.id, undefined, {
        durability: 'sync',
      } as RunnableConfig);
    } else if (!isThreadFinished(state)) {
      // A step a crash cut short (perhaps after its tasks stored their writes): run on.
      kind = 'continue';
      result = await graph.invoke(null, threadConfig);
    }
    const suspended =
      ((result as { __interrupt__?: unknown[] } | undefined)?.__interrupt__ ?? []).length > 0;
    return { kind, result: suspended ? 'waiting' : 'completed', ms: performance.now() - start };
  } catch (error) {
    const code = VeridexError.is(error)
      ? error.code
      : transient(error)
        ? 'db_unavailable'
        : 'untyped';
    return {
      kind,
      result: transient(error) ? 'retry' : 'failed',
      ms: performance.now() - start,
      code,
      message: error instanceof Error ? error.message.slice(0, 300) : String(error),
    };
  }
}

/** Hands the thread back; retried until the database takes it (it may be restarting). */
async function release(row: Row, outcome: AdvanceOutcome, retries: number): Promise<void> {
  // A non-transient failure is retried twice (the thread stays resumable), then recorded.
  const failedForGood = outcome.result === 'failed' && retries >= 2;
  const state =
    outcome.result === 'retry' || (outcome.result === 'failed' && !failedForGood)
      ? 'running'
      : outcome.result === 'failed'
        ? 'failed'
        : outcome.result;
  const delayMs = state === 'running' ? 1000 + Math.random() * 2000 : 0;
  const notBefore = delayMs > 0 ? new Date(Date.now() + delayMs) : null;
  for (let attempt = 0; ; attempt++) {
    try {
      await db.query(RELEASE_THREAD, [
        row.id,
        config.token,
        state,
        outcome.code ?? null,
        notBefore,
        outcome.result === 'failed' ? 1 : 0,
      ]);
      return;
    } catch (error) {
      if (!transient(error) || attempt > 600) throw error;
      await sleep(500);
    }
  }
}

async function work(row: Row): Promise<void> {
  const outcome = await advance(row);
  advances.push(outcome);
  await release(row, outcome, row.retries);
}

async function claim(limit: number, orphans: boolean): Promise<Row[]> {
  const { rows } = orphans
    ? await db.query<Row>(OWNED_THREADS, [config.token])
    : await db.query<Row>(CLAIM_THREADS, [config.token, limit]);
  return rows.filter((row) => !active.has(row.id));
}

function report(): void {
  const message: WorkerReport = {
    type: 'report',
    token: config.token,
    samples: samples.splice(0),
    advances: advances.splice(0),
    active: active.size,
  };
  process.send?.(message);
}
const reporter = setInterval(report, 1000);

let lastOrphanCheck = 0;
while (!stopping) {
  const free = config.concurrency - active.size;
  let claimed: Row[] = [];
  if (free > 0) {
    try {
      // A claim whose commit succeeded but whose answer was lost leaves threads owned by this
      // worker that it does not know about: pick those up every few seconds.
      const orphans = Date.now() - lastOrphanCheck > 5000;
      if (orphans) lastOrphanCheck = Date.now();
      claimed = await claim(free, orphans);
    } catch (error) {
      if (!transient(error)) console.error(`worker ${config.token}: claim failed`, error);
      await sleep(500);
      continue;
    }
  }
  for (const row of claimed.slice(0, Math.max(0, config.concurrency - active.size))) {
    const task = work(row)
      .catch((error) => console.error(`worker ${config.token}: release failed`, error))
      .finally(() => active.delete(row.id));
    active.set(row.id, task);
  }
  if (claimed.length === 0 || active.size >= config.concurrency) {
    await Promise.race([sleep(claimed.length === 0 ? 150 : 1000), ...active.values()]);
  }
}
await Promise.all(active.values());
clearInterval(reporter);
report();
await stack.checkpointer.settled();
await db.close();
process.exit(0);
