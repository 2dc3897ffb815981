// `npm run soak`: many workers, one database. N worker processes run the governed treasury
// graph on one PostgreSQL schema with M threads in flight; two approver processes sign
// decisions at random times (one with a skewed clock); faults are injected — SIGKILL of a
// worker mid-step (restarted), pg_terminate_backend of random connections, one PostgreSQL
// restart — and at the end the database and the payment rail are checked: every approved
// transfer ran exactly once, nothing else ran, no decision was lost, every thread is
// finished, failed with a typed code or resumable, every chain, checkpoint and evidence
// bundle verifies. Prints the numbers and a last line `RESULT soak …`. Not part of `npm test`.
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateKeyPair, writeKeyPair } from '../src/audit/index.js';
import { createDatabase, type Database, migrate } from '../src/db/index.js';
import { PostgresApproverDirectory } from '../src/identity/index.js';
import { DatabasePaymentRail } from '../src/treasury/index.js';
import { type CheckReport, runChecks } from './soak/checks.js';
import { buildSoakStack, type NodeSample } from './soak/graph.js';
import { parseSoakOptions } from './soak/options.js';
import { planThread, seededRandom } from './soak/plan.js';
import {
  type Cluster,
  ensureClusterUp,
  findCluster,
  restartCluster,
} from './soak/postgres-control.js';
import type {
  AdvanceOutcome,
  ApproverConfig,
  ApproverReport,
  WorkerConfig,
  WorkerReport,
} from './soak/protocol.js';
import {
  COUNT_UNFINISHED,
  CREATE_SOAK_TABLES,
  INSERT_THREADS,
  RELEASE_WORKER,
  TERMINATE_RANDOM,
} from './soak/sql.js';
import { median, ms, percentile } from './stats.js';

const options = parseSoakOptions(process.argv.slice(2));
const runId = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
const schema = `soak_${runId}`;
const random = seededRandom(options.seed);
const started = Date.now();
const budgetEnd = started + options.minutes * 60_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function urlFor(application: string): string {
  const url = new URL(options.url);
  url.searchParams.set('schema', schema);
  url.searchParams.set('application_name', application);
  return url.toString();
}

// ---- the shared server must be left running, whatever happens ------------------------------
const cluster: Cluster | undefined = findCluster(Number(new URL(options.url).port || 5432));
if (options.pgRestart && !cluster) {
  console.log('soak: no local cluster found with pg_lsclusters; the PostgreSQL restart is skipped');
  options.pgRestart = false;
}
const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
  if (!cluster) return;
  try {
    if (ensureClusterUp(cluster))
      console.error('soak: PostgreSQL was down at exit; started it again');
  } catch (error) {
    console.error(`soak: could not start PostgreSQL again: ${(error as Error).message}`);
  }
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130));

// ---- set-up -------------------------------------------------------------------------------
const tmp = mkdtempSync(join(tmpdir(), 'veridex-soak-'));
const evidenceDir = join(tmp, 'evidence');
const evidenceKey = generateKeyPair();
const db: Database = await createDatabase({ url: urlFor(`soakc-${runId}`), maxConnections: 4 });
await migrate(db);
await new DatabasePaymentRail(db).install();
await db.query(CREATE_SOAK_TABLES);
const directory = new PostgresApproverDirectory(db);
const approverSets = [
  ['alice@soak.example', 'carol@soak.example'],
  ['bob@soak.example', 'dave@soak.example'],
];
const identities = [];
for (const set of approverSets) {
  const mine = [];
  for (const id of set) {
    const files = writeKeyPair(join(tmp, 'keys'), undefined, id.split('@')[0]);
    await directory.add({ id, publicKeys: [files.publicKeyPath] });
    mine.push({ id, keyFile: files.privateKeyPath });
  }
  identities.push(mine);
}

// ---- what the processes report --------------------------------------------------------------
const samples = new Map<string, number[]>();
const advanceCounts = new Map<string, number>();
const failureMessages = new Map<string, string>();
const approverReports = new Map<string, ApproverReport>();
const activeBySlot = new Map<number, number>();
const loads: number[] = [];
const faults = { kills: 0, crashes: 0, restarts: 0, terminated: 0, pgRestarts: 0, pgDownMs: 0 };

function onReport(slot: number, report: WorkerReport): void {
  activeBySlot.set(slot, report.active);
  for (const sample of report.samples as NodeSample[]) {
    const key = `${sample.node}:${sample.kind}`;
    (samples.get(key) ?? samples.set(key, []).get(key)!).push(sample.ms);
  }
  for (const outcome of report.advances as AdvanceOutcome[]) {
    const key = `${outcome.kind}:${outcome.result}${outcome.code ? `:${outcome.code}` : ''}`;
    advanceCounts.set(key, (advanceCounts.get(key) ?? 0) + 1);
    (samples.get('advance') ?? samples.set('advance', []).get('advance')!).push(outcome.ms);
    if (outcome.message && !failureMessages.has(key)) failureMessages.set(key, outcome.message);
  }
}

function forward(child: ChildProcess, prefix: string): void {
  const lines = (chunk: Buffer) => {
    for (const line of chunk.toString().split('\n'))
      if (line.trim()) console.log(`${prefix} ${line}`);
  };
  child.stdout?.on('data', lines);
  child.stderr?.on('data', lines);
}

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

// ---- workers ----------------------------------------------------------------------------------
interface Slot {
  index: number;
  child: ChildProcess;
  token: string;
  killed: boolean;
  exited: Promise<void>;
}
const slots: Slot[] = [];
let stopping = false;
let generation = 0;

function startWorker(index: number): Slot {
  const token = `w${index}-g${++generation}-${runId}`;
  const config: WorkerConfig = {
    url: urlFor(`soak-${runId}-w${index}`),
    token,
    concurrency: Math.ceil(options.inFlight / options.workers),
    evidenceKeyHex: Buffer.from(evidenceKey.privateKey).toString('hex'),
    evidenceDir,
    approvalTimeoutMs: options.approvalTimeoutS * 1000,
  };
  const child = fork(here('./soak/worker.ts'), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, SOAK_WORKER: JSON.stringify(config) },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  children.add(child);
  forward(child, `[w${index}]`);
  child.on('message', (message: WorkerReport) => {
    if (message?.type === 'report') onReport(index, message);
  });
  const slot: Slot = {
    index,
    child,
    token,
    killed: false,
    exited: new Promise((resolve) => {
      child.on('exit', (code, signal) => {
        children.delete(child);
        void afterExit(slot, code, signal).finally(() => resolve());
      });
    }),
  };
  slots[index] = slot;
  return slot;
}

/** A dead worker's threads go back to the queue; unless the run is over, a new worker starts. */
async function afterExit(slot: Slot, code: number | null, signal: NodeJS.Signals | null) {
  if (!slot.killed && !(stopping && code === 0)) {
    faults.crashes += 1;
    console.log(`soak: worker ${slot.index} exited unexpectedly (code ${code}, signal ${signal})`);
  }
  for (let attempt = 0; ; attempt++) {
    try {
      await db.query(RELEASE_WORKER, [slot.token]);
      break;
    } catch (error) {
      if (attempt > 600) throw error;
      await sleep(500);
    }
  }
  if (stopping) return;
  faults.restarts += 1;
  startWorker(slot.index);
}

// ---- approvers --------------------------------------------------------------------------------
const approvers: ChildProcess[] = [];
for (const [index, mine] of identities.entries()) {
  const skewMs = index === 1 ? options.skewS * 1000 : 0;
  const config: ApproverConfig & { skewMs: number; cliEvery: number } = {
    url: urlFor(`soak-${runId}-a${index}`),
    name: `approver-${index}${skewMs ? ` (clock ${skewMs > 0 ? '+' : ''}${skewMs / 1000} s)` : ''}`,
    index,
    identities: mine,
    maxDecisionDelayMs: options.maxDecisionDelayS * 1000,
    decidesLate: index === 1,
    seed: options.seed * 31 + index,
    skewMs,
    cliEvery: index === 0 ? 40 : 0,
  };
  const child = fork(here('./soak/approver.ts'), [], {
    execArgv: ['--import', 'tsx', '--import', here('./soak/skew-clock.ts')],
    env: { ...process.env, SOAK_APPROVER: JSON.stringify(config), SOAK_SKEW_MS: String(skewMs) },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  children.add(child);
  forward(child, `[a${index}]`);
  child.on('message', (message: ApproverReport) => {
    if (message?.type === 'approver') approverReports.set(message.name, message);
  });
  approvers.push(child);
}
for (let index = 0; index < options.workers; index++) startWorker(index);

// ---- faults -----------------------------------------------------------------------------------
const timers: NodeJS.Timeout[] = [];
function every(seconds: number, action: () => Promise<void>): void {
  const next = () => {
    const timer = setTimeout(
      async () => {
        if (Date.now() >= budgetEnd || stopping) return;
        await action().catch((error) =>
          console.log(`soak: fault failed: ${(error as Error).message}`),
        );
        next();
      },
      seconds * 1000 * (0.5 + random()),
    );
    timers.push(timer);
  };
  next();
}
if (options.kill) {
  every(options.killEveryS, async () => {
    // Mid-step: a worker that has threads in flight right now.
    const busy = slots.filter((slot) => (activeBySlot.get(slot.index) ?? 0) > 0 && !slot.killed);
    const victim = (busy.length > 0 ? busy : slots)[
      Math.floor(random() * (busy.length || slots.length))
    ];
    if (!victim || victim.killed) return;
    victim.killed = true;
    faults.kills += 1;
    console.log(
      `soak: kill -9 worker ${victim.index} (${activeBySlot.get(victim.index) ?? 0} threads in flight)`,
    );
    victim.child.kill('SIGKILL');
  });
}
if (options.terminate) {
  every(options.terminateEveryS, async () => {
    const { rows } = await db.query<{ terminated: boolean }>(TERMINATE_RANDOM, [
      `soak-${runId}-%`,
      1 + Math.floor(random() * 3),
    ]);
    faults.terminated += rows.filter((row) => row.terminated).length;
  });
}
if (options.pgRestart && cluster) {
  const at = options.pgRestartAt * options.minutes * 60_000;
  timers.push(
    setTimeout(async () => {
      console.log(`soak: restarting PostgreSQL ${cluster.version}/${cluster.name}`);
      const begin = Date.now();
      try {
        await restartCluster(cluster);
      } catch (error) {
        console.log(`soak: restart failed: ${(error as Error).message}`);
      }
      for (;;) {
        try {
          await db.query('SELECT 1');
          break;
        } catch {
          await sleep(100);
        }
      }
      faults.pgRestarts += 1;
      faults.pgDownMs = Date.now() - begin;
      console.log(`soak: PostgreSQL back after ${faults.pgDownMs} ms`);
    }, at),
  );
}

// ---- the run: keep M threads in flight until the budget or the request count is spent ----------
let created = 0;
let lastProgress = Date.now();
const loadTimer = setInterval(() => loads.push(loadavg()[0]!), 10_000);
loads.push(loadavg()[0]!);
async function unfinished(): Promise<number | undefined> {
  try {
    return (await db.query<{ unfinished: number }>(COUNT_UNFINISHED)).rows[0]!.unfinished;
  } catch {
    return undefined;
  }
}
async function progress(phase: string): Promise<void> {
  if (Date.now() - lastProgress < 30_000) return;
  lastProgress = Date.now();
  try {
    const { rows } = await db.query<{ state: string; count: number }>(
      'SELECT state, count(*)::int AS count FROM soak_threads GROUP BY state ORDER BY state',
    );
    const states = rows.map((row) => `${row.state} ${row.count}`).join(', ');
    console.log(
      `soak: ${phase} ${((Date.now() - started) / 60_000).toFixed(1)} min: ${created} threads (${states}); kills ${faults.kills}, restarts ${faults.restarts}, terminated ${faults.terminated}, pg restarts ${faults.pgRestarts}; load ${loadavg()[0]!.toFixed(1)}`,
    );
  } catch {
    // The database may be restarting.
  }
}
while (Date.now() < budgetEnd && created < options.maxThreads) {
  const open = await unfinished();
  if (open !== undefined && open < options.inFlight) {
    const batch = Array.from(
      { length: Math.min(options.inFlight - open, options.maxThreads - created) },
      (_, offset) => planThread(runId, created + offset, random),
    );
    try {
      await db.query(INSERT_THREADS, [JSON.stringify(batch)]);
      created += batch.length;
    } catch {
      // Not inserted (or unknown): the next round counts again.
    }
  }
  await progress('running');
  await sleep(250);
}
for (const timer of timers) clearTimeout(timer);
const budgetSpent = Date.now();
console.log(
  `soak: budget spent after ${((budgetSpent - started) / 60_000).toFixed(1)} min; draining`,
);
while (Date.now() - budgetSpent < options.drainS * 1000) {
  if ((await unfinished()) === 0) break;
  await progress('draining');
  await sleep(1000);
}

// ---- stop everything ---------------------------------------------------------------------------
stopping = true;
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.send({ type: 'stop' });
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  await exited;
  clearTimeout(timer);
}
await Promise.all(approvers.map(stop));
await Promise.all(slots.map((slot) => stop(slot.child).then(() => slot.exited)));
clearInterval(loadTimer);
const activeEnd = Date.now();

// ---- checks ------------------------------------------------------------------------------------
console.log('soak: checking the database, the rail, every chain, checkpoint and bundle');
const stack = await buildSoakStack({
  db,
  evidenceKey: evidenceKey.privateKey,
  evidenceDir,
  approvalTimeoutMs: options.approvalTimeoutS * 1000,
});
const report: CheckReport = await runChecks(stack, {
  dir: evidenceDir,
  publicKey: evidenceKey.publicKey,
});
const { rows: toolRows } = await db.query<{
  tool_calls: number;
  first_ms: number;
  last_ms: number;
}>(`SELECT count(*)::int AS tool_calls FROM veridex_audit_events WHERE type = 'tool_executed'`);
const toolCalls = toolRows[0]!.tool_calls;
const activeS = (activeEnd - started) / 1000;
const finishedThreads = (report.byState.completed ?? 0) + (report.byState.failed ?? 0);

// ---- numbers -----------------------------------------------------------------------------------
const all = (prefix: string) =>
  [...samples.entries()].filter(([key]) => key.startsWith(prefix)).flatMap(([, values]) => values);
const stat = (values: number[]) =>
  values.length === 0
    ? 'n/a'
    : `p50 ${ms(median(values))} p99 ${ms(percentile(values, 99))} ms (n=${values.length})`;
const steps = [...samples.entries()]
  .filter(([key]) => key !== 'advance')
  .flatMap(([, values]) => values);
const governed = all('tools:');
const mean = (values: number[]) =>
  values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);
console.log('');
console.log(
  `run ${runId}: ${options.workers} workers, ${options.inFlight} threads in flight, ${options.minutes} min budget + drain; active ${(activeS / 60).toFixed(1)} min`,
);
console.log(
  `load average (1 min) during the run: mean ${mean(loads).toFixed(1)}, max ${Math.max(...loads).toFixed(1)} on ${(await import('node:os')).cpus().length} cores`,
);
console.log(
  `threads: ${report.threads} (${JSON.stringify(report.byState)}); failed codes ${JSON.stringify(report.failedCodes)}`,
);
console.log(
  `approvals: ${report.approvals} ${JSON.stringify(report.approvalsByStatus)}; rail executions ${report.executed}`,
);
console.log(
  `throughput: ${(finishedThreads / (activeS / 60)).toFixed(1)} threads/min, ${(toolCalls / activeS).toFixed(2)} tool calls/s (${toolCalls} executed)`,
);
console.log(`step (node) latency: ${stat(steps)}`);
for (const [key, values] of [...samples.entries()].sort()) console.log(`  ${key}: ${stat(values)}`);
console.log(
  `governed tool node, own time per call at ${options.inFlight} threads in flight: ${stat(governed)}`,
);
console.log(`approval → execution: ${stat(report.approvalToExecution)}`);
console.log(`advances: ${JSON.stringify(Object.fromEntries(advanceCounts))}`);
for (const [key, message] of failureMessages) console.log(`  first ${key}: ${message}`);
for (const approver of approverReports.values()) {
  console.log(
    `${approver.name}: ${approver.decisions} decisions; refused ${JSON.stringify(approver.refusals)}; errors ${JSON.stringify(approver.errors)}`,
  );
}
console.log(
  `faults: ${faults.kills} kill -9, ${faults.crashes} unexpected worker exits, ${faults.restarts} worker restarts, ${faults.terminated} connections terminated, ${faults.pgRestarts} PostgreSQL restart(s) (${faults.pgDownMs} ms until a query succeeded), approver clock skew ${options.skewS} s`,
);
console.log(
  `checks: double ${report.double}, lost ${report.lost}, approved but still resumable ${report.approvedPending}, rejected executed ${report.rejectedExecuted}, expired executed ${report.expiredExecuted}, unapproved executed ${report.unapprovedExecuted}, approved after deadline ${report.approvedAfterDeadline}, expired early ${report.expiredEarly}, decisions lost ${report.decisionsLost}, stuck ${report.stuck}, untyped failures ${report.untyped}`,
);
console.log(
  `verified: ${report.chainsChecked} audit chains (${report.chainsBroken} broken), ${report.checkpointsChecked} checkpoint chains (${report.checkpointsBroken} broken), ${report.evidenceChecked} evidence bundles (${report.evidenceInvalid} invalid, ${report.evidenceMissing} missing)`,
);
for (const problem of report.problems) console.log(`  problem: ${problem}`);
const violations =
  report.double +
  report.lost +
  report.rejectedExecuted +
  report.expiredExecuted +
  report.unapprovedExecuted +
  report.approvedAfterDeadline +
  report.expiredEarly +
  report.decisionsLost +
  report.stuck +
  report.untyped +
  report.chainsBroken +
  report.checkpointsBroken +
  report.evidenceInvalid +
  report.evidenceMissing +
  faults.crashes;
await stack.checkpointer.close();
if (!options.keepSchema && violations === 0) await db.query(`DROP SCHEMA "${schema}" CASCADE`);
else console.log(`soak: schema ${schema} kept for inspection`);
await db.close();
rmSync(tmp, { recursive: true, force: true });
const governedP = (p: number) => (governed.length ? ms(percentile(governed, p)) : 'n/a');
console.log(
  `RESULT soak threads=${report.threads} completed=${report.byState.completed ?? 0} failed=${report.byState.failed ?? 0} resumable=${report.threads - finishedThreads} executed=${report.executed} double=${report.double} lost=${report.lost} rejected_executed=${report.rejectedExecuted} expired_executed=${report.expiredExecuted} unapproved_executed=${report.unapprovedExecuted} late_approved=${report.approvedAfterDeadline} decisions_lost=${report.decisionsLost} stuck=${report.stuck} chains_broken=${report.chainsBroken} checkpoints_broken=${report.checkpointsBroken} evidence_invalid=${report.evidenceInvalid + report.evidenceMissing} threads_per_min=${(finishedThreads / (activeS / 60)).toFixed(1)} tool_calls_per_s=${(toolCalls / activeS).toFixed(2)} step_p50_ms=${ms(median(steps))} step_p99_ms=${ms(percentile(steps, 99))} approval_to_execution_p50_ms=${ms(median(report.approvalToExecution))} approval_to_execution_p99_ms=${ms(percentile(report.approvalToExecution, 99))} governed_p50_ms=${governedP(50)} governed_p99_ms=${governedP(99)} restarts=${faults.restarts} kills=${faults.kills} terminated=${faults.terminated} pg_restarts=${faults.pgRestarts} pg_down_ms=${faults.pgDownMs} minutes=${(activeS / 60).toFixed(1)} load_mean=${mean(loads).toFixed(1)}`,
);
process.exit(violations === 0 ? 0 : 1);
