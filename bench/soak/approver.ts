// A soak approver: a separate process that watches the run's pending approvals and decides
// them with Ed25519-signed statements after random delays — approving, rejecting, or letting
// them expire according to the thread's fate. One of the two runs with a skewed clock
// (bench/soak/skew-clock.ts) and takes the `late` fate: deciding just after the deadline.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ApprovalManager, type ApprovalRequest } from '../../src/approvals/index.js';
import { AuditLog, PostgresAuditStore, readPrivateKey } from '../../src/audit/index.js';
import { isConnectionError } from '../../src/db/db-errors.js';
import { createDatabase } from '../../src/db/index.js';
import { VeridexError } from '../../src/errors/index.js';
import { signDecision } from '../../src/identity/index.js';
import type { ApproverConfig, ApproverReport } from './protocol.js';
import { FATES_OF, RECORD_DECISION, RECORD_REFUSAL } from './sql.js';

const config = JSON.parse(process.env.SOAK_APPROVER ?? '{}') as ApproverConfig & {
  skewMs: number;
  cliEvery: number;
};
const VERIDEX = fileURLToPath(new URL('../../bin/veridex.mjs', import.meta.url));
const db = await createDatabase({ url: config.url, maxConnections: 3 });
const approvals = new ApprovalManager({
  db,
  audit: new AuditLog({ store: new PostgresAuditStore(db) }),
});
const keys = new Map(config.identities.map((each) => [each.id, readPrivateKey(each.keyFile)]));
const seen = new Set<string>();
const timers = new Set<NodeJS.Timeout>();
const report: ApproverReport = {
  type: 'approver',
  name: config.name,
  decisions: 0,
  refusals: {},
  errors: {},
};
let stopping = false;
let decided = 0;
let seed = config.seed >>> 0;

process.on('message', (message: { type?: string }) => {
  if (message?.type === 'stop') stopping = true;
});
process.on('unhandledRejection', (error) => {
  console.error(`approver ${config.name}: unhandled rejection`, error);
});

/** A seeded pseudo-random number in [0, 1) (mulberry32), so runs with one seed decide alike. */
function random(): number {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const transient = (error: unknown) =>
  VeridexError.is(error, 'db_unavailable') || isConnectionError(error);
const count = (bucket: Record<string, number>, key: string) => {
  bucket[key] = (bucket[key] ?? 0) + 1;
};

async function retrying<T>(what: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await what();
    } catch (error) {
      if (!transient(error) || attempt >= 240) throw error;
      await sleep(500);
    }
  }
}

/** Which of this process's approvers has not decided on the request yet. */
function identityFor(request: ApprovalRequest): string | undefined {
  const decided = new Set(request.decisions.map((each) => each.approver));
  return config.identities.map((each) => each.id).find((id) => !decided.has(id));
}

/** Through the `veridex` CLI, as an operator at a terminal would (`approvals approve --key`). */
async function approveWithCli(request: ApprovalRequest, approver: string): Promise<void> {
  const keyFile = config.identities.find((each) => each.id === approver)!.keyFile;
  const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn(
      process.execPath,
      [VERIDEX, 'approvals', 'approve', request.id, '--key', keyFile, '--database-url', config.url],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let err = '';
    child.stderr.on('data', (chunk) => (err += chunk));
    child.on('close', (exit) => resolve({ code: exit, stderr: err }));
  });
  if (code !== 0) {
    const known = /\b([a-z]+(?:_[a-z]+)+)\b/.exec(stderr)?.[1] ?? `cli_exit_${code}`;
    count(report.refusals, known);
    await retrying(() => db.query(RECORD_REFUSAL, [request.id, approver, known, config.name]));
    return;
  }
  const after = await retrying(() => approvals.get(request.id));
  const mine = after?.decisions.find((each) => each.approver === approver);
  report.decisions += 1;
  if (after && mine) {
    await retrying(() =>
      db.query(RECORD_DECISION, [
        request.id,
        mine.decisionId,
        approver,
        'approve',
        `${config.name}:cli`,
        after.status,
      ]),
    );
  }
}

async function decide(request: ApprovalRequest, decision: 'approve' | 'reject'): Promise<void> {
  if (stopping) return;
  const approver = identityFor(request);
  if (!approver) return;
  decided += 1;
  if (decision === 'approve' && config.cliEvery > 0 && decided % config.cliEvery === 0) {
    return approveWithCli(request, approver);
  }
  const signed = signDecision(
    {
      request,
      decision,
      approver,
      ...(decision === 'reject' ? { reason: 'not on the payment run' } : {}),
    },
    keys.get(approver)!,
  );
  try {
    // The same signed statement is re-sent after a dropped connection: if the first attempt
    // was committed, the manager recognises it (by its signature) and answers with the request.
    const after = await retrying(() => approvals.decide(request.id, signed));
    report.decisions += 1;
    const id = after.decisions.find((each) => each.signed?.signature === signed.signature);
    await retrying(() =>
      db.query(RECORD_DECISION, [
        request.id,
        id?.decisionId ?? `missing:${signed.signature.slice(0, 16)}`,
        approver,
        decision,
        config.name,
        after.status,
      ]),
    );
  } catch (error) {
    const code = VeridexError.is(error) ? error.code : 'untyped';
    count(VeridexError.is(error) ? report.refusals : report.errors, code);
    if (!VeridexError.is(error)) console.error(`approver ${config.name}:`, error);
    await retrying(() => db.query(RECORD_REFUSAL, [request.id, approver, code, config.name])).catch(
      () => undefined,
    );
  }
}

function schedule(request: ApprovalRequest, decision: 'approve' | 'reject', delayMs: number): void {
  const timer = setTimeout(
    () => {
      timers.delete(timer);
      void decide(request, decision);
    },
    Math.max(0, delayMs),
  );
  timers.add(timer);
}

/** Plans what this process does with a request it has not seen before. */
function plan(request: ApprovalRequest, fate: string): void {
  const mine = Number.parseInt(request.id.slice(-6), 16) % 2 === config.index;
  const delay = () => 200 + random() * config.maxDecisionDelayMs;
  switch (fate) {
    case 'approve':
    case 'reject':
      if (mine) schedule(request, fate, delay());
      return;
    case 'race':
      // Both processes approve the same single-approval request: one wins, one is refused.
      schedule(request, 'approve', delay());
      return;
    case 'dual':
      schedule(request, 'approve', delay());
      return;
    case 'late': {
      if (!config.decidesLate) return;
      // Just after the deadline by the real clock (before a worker's resume marks it expired);
      // this process's own clock may say otherwise.
      const realNow = Date.now() - config.skewMs;
      schedule(request, 'approve', Date.parse(request.expiresAt) - realNow + 50 + random() * 950);
      return;
    }
    default:
      // `expire`: nobody decides.
      return;
  }
}

async function poll(): Promise<void> {
  const pending = await approvals.listPending();
  const fresh = pending.filter((request) => !seen.has(request.id));
  if (fresh.length === 0) return;
  const { rows } = await db.query<{ id: string; fate: string }>(FATES_OF, [
    [...new Set(fresh.map((request) => request.threadId))],
  ]);
  const fates = new Map(rows.map((row) => [row.id, row.fate]));
  for (const request of fresh) {
    seen.add(request.id);
    if (request.ruleId === 'treasury.transfer_in_doubt') {
      count(report.errors, 'in_doubt_request_seen');
      continue;
    }
    plan(request, fates.get(request.threadId) ?? 'expire');
  }
}

const reporter = setInterval(() => process.send?.({ ...report }), 1000);
while (!stopping) {
  try {
    await poll();
  } catch (error) {
    if (!transient(error)) {
      count(report.errors, VeridexError.is(error) ? error.code : 'untyped');
      console.error(`approver ${config.name}: poll failed`, error);
    }
  }
  await sleep(300 + random() * 300);
}
for (const timer of timers) clearTimeout(timer);
clearInterval(reporter);
process.send?.({ ...report });
await db.close();
process.exit(0);
