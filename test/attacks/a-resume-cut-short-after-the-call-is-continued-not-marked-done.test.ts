// Resumer pass (startResumer). README: "A resume that throws is recorded (`resume_error`) and
// retried with backoff …; a crash mid-resume leaves the lease to run out and another attempt to
// follow." The next attempt only resumes a thread whose checkpoint still shows the approval's
// interrupt. If the resume got past the governed tools step — the approved transfer ran and its
// step was checkpointed (`durability: 'sync'`) — and then failed (the model provider answering
// 503 on the turn after the call, or the worker killed there), the thread is due to run `model`
// but no longer waits on the approval: the retry records `not_waiting`, sets `resumed_at`, and
// nothing ever continues the run. The agent never reports the payment (nor does anything the
// turn after it would have done), and the inbox says "approved — the run no longer waited on it".
// `resumeThread` itself would continue such a thread (it runs on a thread due to run a node);
// the resumer never calls it there.
// Secure: a retry continues a thread that is due to run (not finished, not suspended on another
// approval), without running the call again.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { PostgresCheckpointer } from '../../src/checkpointer/index.js';
import { createDatabase, type Database, migrate } from '../../src/db/index.js';
import { type ResumeOutcome, startResumer } from '../../src/nodes/index.js';
import { describeEachDatabase, postgresUrl, withSchemaUrl } from '../support/databases.js';
import { eventually, resumerApp } from './fixtures/resumer-app.js';

const HOUR = 3_600_000;
const tsx = fileURLToPath(new URL('../../node_modules/tsx/dist/cli.mjs', import.meta.url));
const root = fileURLToPath(new URL('../..', import.meta.url));
const dyingWorker = fileURLToPath(new URL('./fixtures/resume-then-die.ts', import.meta.url));

async function expireLease(db: Database, approvalId: string) {
  await db.query(
    `UPDATE veridex_approvals SET resume_lease_until = now() - interval '1 second' WHERE id = $1`,
    [approvalId],
  );
}

describeEachDatabase('a resume that fails after the approved call ran', (context) => {
  it('is continued by the retry: the model answers, the run finishes, the transfer ran once', async () => {
    const db = context.db();
    let outage = 1;
    const app = await resumerApp(db, {
      onTurnAfterTransfer: () => {
        if (outage-- > 0) throw new Error('model provider: 503 Service Unavailable');
      },
    });
    const pending = await app.suspend('t-503');
    await app.approve(pending);
    const resumer = startResumer({
      graph: app.graph,
      agentId: 'payout-bot',
      db,
      audit: app.audit,
      pollMs: HOUR,
      config: { durability: 'sync' },
    });
    try {
      expect(await resumer.runOnce()).toEqual([
        expect.objectContaining({ outcome: 'failed', error: expect.stringContaining('503') }),
      ]);
      expect(app.counters.transfers).toEqual(['50000.00']);
      await expireLease(db, pending.approvalId); // the backoff has passed
      await resumer.runOnce();
      const state = await app.graph.getState({ configurable: { thread_id: 't-503' } });
      expect(state.next).toEqual([]);
      expect(state.values.messages.at(-1)?.content).toBe('paid acme');
      expect(app.counters.transfers).toEqual(['50000.00']);
    } finally {
      await resumer.stop();
    }
  });
});

it.runIf(postgresUrl)(
  'a worker killed (SIGKILL) on the turn after the approved transfer: the next resumer finishes the run, without a second transfer',
  { timeout: 300_000 },
  async () => {
    await withSchemaUrl(async (url) => {
      const db = await createDatabase({ url });
      try {
        await migrate(db);
        await db.query('CREATE TABLE attack_transfers (amount text NOT NULL)');
        const child = spawn(process.execPath, [tsx, dyingWorker, url, 't-killed'], {
          cwd: root,
          env: process.env,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk) => (stdout += chunk));
        child.stderr.on('data', (chunk) => (stderr += chunk));
        const exit = await new Promise<{ code: number | null; signal: string | null }>((resolve) =>
          child.on('close', (code, signal) => resolve({ code, signal })),
        );
        // tsx relays the worker's death as 128 + SIGKILL.
        expect(exit.signal === 'SIGKILL' || exit.code === 137, stderr).toBe(true);
        const approvalId = String(JSON.parse(stdout.split('\n')[0]!).approvalId);
        const count = async () =>
          Number(
            (await db.query<{ n: string }>('SELECT count(*) AS n FROM attack_transfers')).rows[0]!
              .n,
          );
        expect(await count()).toBe(1);

        // Another worker of the same app, after the dead one's lease ran out.
        const app = await resumerApp(db, {
          checkpointer: PostgresCheckpointer.fromDatabase(db),
          registerApprovers: false,
        });
        const outcomes: ResumeOutcome[] = [];
        const resumer = startResumer({
          graph: app.graph,
          agentId: 'payout-bot',
          db,
          audit: app.audit,
          pollMs: 200,
          config: { durability: 'sync' },
          onOutcome: (outcome) => outcomes.push(outcome),
        });
        try {
          await eventually(() => outcomes.length > 0, 30_000);
          expect(outcomes[0]).toMatchObject({ approvalId });
          const state = await app.graph.getState({ configurable: { thread_id: 't-killed' } });
          expect(state.next).toEqual([]);
          expect(state.values.messages.at(-1)?.content).toBe('paid acme');
          expect(await count()).toBe(1);
        } finally {
          await resumer.stop();
        }
      } finally {
        await db.close();
      }
    });
  },
);
