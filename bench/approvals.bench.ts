// Deciding one approval end to end — authentication, the request's row lock, the audit
// events — signed (Ed25519 statement checked against the approver directory) next to the
// bare-string path it replaces, interleaved in one run on the same database.
import { randomBytes } from 'node:crypto';
import { ApprovalManager } from '../src/approvals/index.js';
import { AuditLog, PostgresAuditStore } from '../src/audit/index.js';
import { createDatabase, migrate } from '../src/db/index.js';
import { authenticateDecision, PostgresApproverDirectory } from '../src/identity/index.js';
import { buildToolProposal, type PolicyDecision } from '../src/policy/index.js';
import type { AnyGovernedTool } from '../src/tools/index.js';
import { signAs, testApproverInits } from '../test/support/approvers.js';
import { median, ms, percentile } from './stats.js';

const ROUNDS = 400;
const WARMUP = 40;

const tool = {
  name: 'transfer',
  schemaHash: 'a'.repeat(64),
  safetyClass: 'financial',
  trust: 'local',
} as unknown as AnyGovernedTool;
const escalate = {
  verdict: 'escalate',
  route: 'human_required',
  reason: 'bench',
  ruleId: 'bench',
  ruleName: 'bench',
  evaluations: [],
} as Extract<PolicyDecision, { verdict: 'escalate' }>;

export async function run(): Promise<void> {
  const url = process.env.DATABASE_URL;
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const db = await createDatabase(url ? { url, schema } : { dataDir: 'memory://', schema });
  console.log(
    `database: ${url ? 'PostgreSQL' : 'PGlite in memory (set DATABASE_URL for PostgreSQL)'}`,
  );
  try {
    await migrate(db);
    const directory = new PostgresApproverDirectory(db);
    for (const init of testApproverInits(['alice'])) await directory.add(init);
    const audit = new AuditLog({ store: new PostgresAuditStore(db) });
    const signed = new ApprovalManager({ db, audit, approvers: directory });
    const bare = new ApprovalManager({ db, audit, approvers: directory, identity: 'unverified' });

    const samples = { signed: [] as number[], bare: [] as number[], authenticate: [] as number[] };
    for (let round = 0; round < WARMUP + ROUNDS; round++) {
      const proposal = (kind: string) =>
        buildToolProposal({
          tool,
          arguments: { to: 'acme', amount: `${round}.00`, currency: 'USD' },
          threadId: `bench-${kind}-${round}`,
          runId: 'run',
          toolCallId: 'call',
          proposer: 'bench-agent',
        });
      const a = await signed.request(proposal('signed'), escalate);
      const b = await bare.request(proposal('bare'), escalate);
      const decision = signAs(a, 'alice');
      // Alternate the order so drift on a shared machine hits both paths alike.
      const order = round % 2 === 0 ? (['signed', 'bare'] as const) : (['bare', 'signed'] as const);
      for (const path of order) {
        const start = performance.now();
        if (path === 'signed') await signed.decide(a.id, decision);
        else await bare.decide(b.id, { decision: 'approve', approver: 'alice' });
        if (round >= WARMUP) samples[path].push(performance.now() - start);
      }
      const start = performance.now();
      await authenticateDecision(signAs(a, 'alice'), directory);
      if (round >= WARMUP) samples.authenticate.push(performance.now() - start);
    }
    const signedP50 = median(samples.signed);
    const bareP50 = median(samples.bare);
    console.log(
      `decide, signed   p50 ${ms(signedP50)} ms  p99 ${ms(percentile(samples.signed, 99))} ms`,
    );
    console.log(
      `decide, bare     p50 ${ms(bareP50)} ms  p99 ${ms(percentile(samples.bare, 99))} ms`,
    );
    console.log(
      `authenticate (directory lookup + Ed25519 verify) p50 ${ms(median(samples.authenticate))} ms`,
    );
    console.log(
      `RESULT approvals backend=${url ? 'postgres' : 'pglite'} signed_p50_ms=${signedP50.toFixed(3)} unsigned_p50_ms=${bareP50.toFixed(3)} added_p50_ms=${(signedP50 - bareP50).toFixed(3)} authenticate_p50_ms=${median(samples.authenticate).toFixed(3)}`,
    );
  } finally {
    await db.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await db.close();
  }
}
