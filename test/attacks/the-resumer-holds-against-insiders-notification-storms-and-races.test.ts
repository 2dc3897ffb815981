// Resumer pass (startResumer, migrations 0018/0019, `veridex serve`'s exposed PGlite,
// signDecisionWeb): the attempts that are defended, as controls. The attacks that work are the
// `*.open-attack.ts` files next to this one (see OPEN-ATTACKS.md).
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ApprovalManager } from '../../src/approvals/index.js';
import { AuditLog } from '../../src/audit/index.js';
import { createDatabase, type Database, migrate } from '../../src/db/index.js';
import { VeridexError } from '../../src/errors/index.js';
import { signDecisionWeb } from '../../src/identity/web/index.js';
import { type ResumeOutcome, startResumer } from '../../src/nodes/index.js';
import { testApproverInits, testKey } from '../support/approvers.js';
import { describeEachDatabase, postgresUrl } from '../support/databases.js';
import { escalate, transferProposal } from '../support/proposals.js';
import { eventually, resumerApp } from './fixtures/resumer-app.js';

const HOUR = 3_600_000;

/** `db` with its resumer claims counted: how many ran, and how many at most at once. */
function countingClaims(db: Database) {
  const seen = { claims: 0, inFlight: 0, maxInFlight: 0 };
  const counted: Database = {
    kind: db.kind,
    schema: db.schema,
    transaction: (fn, options) => db.transaction(fn, options),
    close: () => db.close(),
    ...(db.listen ? { listen: (channel, onNotify) => db.listen!(channel, onNotify) } : {}),
    query: async (text, params, options) => {
      const claim = /resume_attempts = resume_attempts \+ 1/.test(text);
      if (claim) {
        seen.claims += 1;
        seen.inFlight += 1;
        seen.maxInFlight = Math.max(seen.maxInFlight, seen.inFlight);
      }
      try {
        return await db.query(text, params, options);
      } finally {
        if (claim) seen.inFlight -= 1;
      }
    },
  };
  return { db: counted, seen };
}

describeEachDatabase('the resumer against insiders, notification storms and races', (context) => {
  it('a NOTIFY storm runs one cycle at a time and stops with the storm', async () => {
    const { db, seen } = countingClaims(context.db());
    const resumer = startResumer({
      graph: (await resumerApp(db)).graph,
      agentId: 'payout-bot',
      db,
      pollMs: HOUR,
    });
    try {
      expect(await resumer.listening).toBe(true);
      for (let i = 0; i < 300; i++) {
        await context.db().query(`SELECT pg_notify('veridex_approval_resolved', $1)`, [db.schema]);
      }
      await eventually(() => seen.claims > 0 && seen.inFlight === 0, 10_000);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const settled = seen.claims;
      expect(seen.maxInFlight).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(seen.claims).toBe(settled);
    } finally {
      await resumer.stop();
    }
  });

  it('an insider who marks a pending request approved (the trigger notifies) resumes the run, and the transfer does not run', async () => {
    const db = context.db();
    const app = await resumerApp(db);
    const pending = await app.suspend('t-flipped');
    const outcomes: ResumeOutcome[] = [];
    const resumer = startResumer({
      graph: app.graph,
      agentId: 'payout-bot',
      db,
      audit: app.audit,
      pollMs: HOUR,
      onOutcome: (outcome) => outcomes.push(outcome),
    });
    try {
      expect(await resumer.listening).toBe(true);
      await db.query(
        `UPDATE veridex_approvals SET status = 'approved', decided_at = now() WHERE id = $1`,
        [pending.approvalId],
      );
      expect(await eventually(() => outcomes.length > 0, 30_000)).toBe(true);
      expect(app.counters.transfers).toEqual([]);
      const events = await app.audit.events('t-flipped');
      expect(events.some((e) => e.payload.kind === 'approval_unproven')).toBe(true);
    } finally {
      await resumer.stop();
    }
  });

  it('an insider who clears resumed_at and the lease of a resumed request gets no second transfer', async () => {
    const db = context.db();
    const app = await resumerApp(db);
    const pending = await app.suspend('t-replayed');
    await app.approve(pending);
    const resumer = startResumer({
      graph: app.graph,
      agentId: 'payout-bot',
      db,
      audit: app.audit,
      pollMs: HOUR,
    });
    try {
      expect(await resumer.runOnce()).toEqual([expect.objectContaining({ outcome: 'resumed' })]);
      await db.query(
        `UPDATE veridex_approvals SET resumed_at = NULL, resume_lease_until = NULL, resume_attempts = 0 WHERE id = $1`,
        [pending.approvalId],
      );
      expect(await resumer.runOnce()).toEqual([
        expect.objectContaining({ outcome: 'not_waiting' }),
      ]);
      expect(app.counters.transfers).toEqual(['50000.00']);
    } finally {
      await resumer.stop();
    }
  });

  it('a second resumer taking over a lease that ran out mid-call does not run the call again', async () => {
    const db = context.db();
    const other = await context.open();
    let finish!: () => void;
    const slowRail = new Promise<void>((resolve) => (finish = resolve));
    let entered!: () => void;
    const inTransfer = new Promise<void>((resolve) => (entered = resolve));
    const app = await resumerApp(db, {
      onTransfer: async () => {
        entered();
        await slowRail;
      },
    });
    const pending = await app.suspend('t-lease');
    await app.approve(pending);
    const first = startResumer({
      graph: app.graph,
      agentId: 'payout-bot',
      db,
      audit: app.audit,
      pollMs: HOUR,
      leaseMs: 200,
    });
    const second = startResumer({
      graph: app.graph,
      agentId: 'payout-bot',
      db: other,
      audit: app.audit,
      pollMs: HOUR,
    });
    try {
      const firstCycle = first.runOnce();
      await inTransfer;
      await new Promise((resolve) => setTimeout(resolve, 500)); // the lease has run out
      await second.runOnce();
      finish();
      await firstCycle;
      expect(app.counters.transfers).toEqual(['50000.00']);
    } finally {
      finish();
      await first.stop();
      await second.stop();
    }
  });
});

it.runIf(postgresUrl)(
  'a schema whose name is every awkward character is woken by its own notifications',
  async () => {
    const schema = `Tén"ant 'x'; -- ${Date.now()}`;
    const db = await createDatabase({ url: postgresUrl!, schema });
    try {
      await migrate(db);
      const app = await resumerApp(db);
      const pending = await app.suspend('t-awkward');
      const outcomes: ResumeOutcome[] = [];
      const resumer = startResumer({
        graph: app.graph,
        agentId: 'payout-bot',
        db,
        audit: app.audit,
        pollMs: HOUR,
        onOutcome: (outcome) => outcomes.push(outcome),
      });
      try {
        expect(await resumer.listening).toBe(true);
        await app.approve(pending);
        expect(await eventually(() => outcomes.length > 0, 60_000)).toBe(true);
        expect(outcomes[0]).toMatchObject({ outcome: 'resumed' });
      } finally {
        await resumer.stop();
      }
    } finally {
      await db.query(`DROP SCHEMA IF EXISTS "${schema.replaceAll('"', '""')}" CASCADE`);
      await db.close();
    }
  },
);

it.runIf(process.getuid?.() === 0)(
  "another local user cannot reach an exposed PGlite's Unix socket (veridex serve's default), even in a directory others may enter",
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vx-expose-'));
    chmodSync(dir, 0o755); // only the socket directory's own protection is tested
    const dataDir = join(dir, 'db');
    const db = await createDatabase({ dataDir, expose: true });
    try {
      const lock = JSON.parse(readFileSync(`${dataDir}.lock`, 'utf8')) as { socket: string };
      const socketDir = decodeURIComponent(new URL(lock.socket).searchParams.get('host')!);
      const probe = `require('node:net').connect(process.argv[1]).on('connect', () => { console.log('connected'); process.exit(0); }).on('error', (e) => { console.log(e.code); process.exit(0); });`;
      const answer = await new Promise<string>((resolve, reject) => {
        const child = spawn(
          'setpriv',
          [
            '--reuid=65534',
            '--regid=65534',
            '--clear-groups',
            process.execPath,
            '-e',
            probe,
            join(socketDir, '.s.PGSQL.5432'),
          ],
          { stdio: ['ignore', 'pipe', 'pipe'] },
        );
        let out = '';
        child.stdout.on('data', (chunk) => (out += chunk));
        child.on('error', reject);
        child.on('close', () => resolve(out.trim()));
      });
      expect(answer).toBe('EACCES');
    } finally {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

it('signDecisionWeb: a decision signed for one approval counts for no other', async () => {
  const manager = new ApprovalManager({
    audit: new AuditLog(),
    approvers: testApproverInits(['alice', 'bob']),
  });
  const first = await manager.request(transferProposal('t-web-a'), escalate('dual_approval'));
  const second = await manager.request(transferProposal('t-web-b'), escalate('dual_approval'));
  const signed = await signDecisionWeb(
    { request: first, decision: 'approve', approver: 'alice' },
    testKey('alice'),
  );
  const refused = await manager.decide(second.id, signed).catch((error: unknown) => error);
  expect(VeridexError.is(refused)).toBe(true);
  expect((refused as VeridexError).code).toMatch(/decision_mismatch|approval_not_found/);
  expect((await manager.require(second.id)).decisions).toEqual([]);
  // Bob's name on alice's statement, re-signed by no one: refused too.
  const renamed = { ...signed, statement: { ...signed.statement, approver: 'bob' } };
  await expect(manager.decide(first.id, renamed)).rejects.toBeInstanceOf(VeridexError);
});
