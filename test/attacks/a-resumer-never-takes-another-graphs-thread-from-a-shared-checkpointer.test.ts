// Resumer pass (startResumer). README: "A resumer skips threads its graph does not hold (another
// graph's resumer takes them)". "Does not hold" is judged by `graph.getState(thread)` having a
// checkpoint at all — but graphs of one deployment usually share one checkpointer (one
// PostgresCheckpointer over the one database), so every graph "holds" every thread:
//  - a graph of the same shape (another tenant's instance of the same agent, with its own tools
//    and credentials) resumes the thread with ITS nodes: the approved transfer runs through the
//    wrong tenant's tool, and the owner's resumer finds nothing left to do;
//  - a graph of another shape sees no approval interrupt in the foreign checkpoint and marks the
//    request resumed (`not_waiting`): the owner's resumer never claims it, the run stays
//    suspended for good, and the inbox says "the run no longer waited on it".
//  - with separate checkpointers (the case the README's claim covers) every resumer process
//    still claims, loads and releases every other graph's resolution, oldest first, on every
//    start — forever, as the release hands the attempt back and nothing records the refusal —
//    and keeps their ids for its lifetime, sending them all with every claim; its own new
//    resolutions wait behind that backlog.
// Secure: a resumer acts only on requests its graph raised (e.g. the graph/agent identity
// recorded on the request and in its hash-chained approval_requested event, or in the interrupt
// value), and releases anything else untouched.
import { expect, it } from 'vitest';
import { PostgresCheckpointer } from '../../src/checkpointer/index.js';
import type { Database } from '../../src/db/index.js';
import { startResumer } from '../../src/nodes/index.js';
import { describeEachDatabase } from '../support/databases.js';
import { resumerApp } from './fixtures/resumer-app.js';

const HOUR = 3_600_000;

async function resumedAt(db: Database, id: string): Promise<Date | null> {
  const { rows } = await db.query<{ resumed_at: Date | null }>(
    'SELECT resumed_at FROM veridex_approvals WHERE id = $1',
    [id],
  );
  return rows[0]!.resumed_at;
}

describeEachDatabase(
  'a resumer and a thread of another graph on the same checkpointer',
  (context) => {
    it("another tenant's graph of the same shape does not run the transfer approved for this tenant's thread", async () => {
      const db = context.db();
      const checkpointer = PostgresCheckpointer.fromDatabase(db);
      // Each tenant's agent has its own identity (its governance's agentId).
      const tenantA = await resumerApp(db, { checkpointer, agentId: 'tenant-a-bot' });
      const tenantB = await resumerApp(db, {
        checkpointer,
        registerApprovers: false,
        agentId: 'tenant-b-bot',
      });
      const pending = await tenantB.suspend('tenant-b:payout');
      await tenantB.approve(pending);

      const resumerA = startResumer({
        graph: tenantA.graph,
        agentId: tenantA.agentId,
        db,
        audit: tenantA.audit,
        pollMs: HOUR,
      });
      try {
        const outcomes = await resumerA.runOnce();
        expect(outcomes.filter((o) => o.outcome === 'resumed')).toEqual([]);
        expect(tenantA.counters.transfers).toEqual([]);
      } finally {
        await resumerA.stop();
      }
      const resumerB = startResumer({
        graph: tenantB.graph,
        agentId: tenantB.agentId,
        db,
        audit: tenantB.audit,
        pollMs: HOUR,
      });
      try {
        expect(await resumerB.runOnce()).toEqual([
          expect.objectContaining({ approvalId: pending.approvalId, outcome: 'resumed' }),
        ]);
        expect(tenantB.counters.transfers).toEqual(['50000.00']);
      } finally {
        await resumerB.stop();
      }
    });

    it('a graph of another shape does not mark the request resumed: its own graph still continues the run', async () => {
      const db = context.db();
      const checkpointer = PostgresCheckpointer.fromDatabase(db);
      const other = await resumerApp(db, {
        checkpointer,
        nodes: ['agent', 'act'],
        agentId: 'other-bot',
      });
      const owner = await resumerApp(db, { checkpointer, registerApprovers: false });
      const pending = await owner.suspend('owner:payout');
      await owner.approve(pending);

      const stranger = startResumer({
        graph: other.graph,
        agentId: other.agentId,
        db,
        audit: other.audit,
        pollMs: HOUR,
      });
      try {
        await stranger.runOnce();
        expect(await resumedAt(db, pending.approvalId)).toBeNull();
      } finally {
        await stranger.stop();
      }
      const resumer = startResumer({
        graph: owner.graph,
        agentId: owner.agentId,
        db,
        audit: owner.audit,
        pollMs: HOUR,
      });
      try {
        expect(await resumer.runOnce()).toEqual([
          expect.objectContaining({ approvalId: pending.approvalId, outcome: 'resumed' }),
        ]);
        expect(owner.counters.transfers).toEqual(['50000.00']);
        const state = await owner.graph.getState({ configurable: { thread_id: 'owner:payout' } });
        expect(state.next).toEqual([]);
      } finally {
        await resumer.stop();
      }
    });
    it("a resumer starting does not walk every other graph's resolutions again", async () => {
      const db = context.db();
      // Another app on the database, with a checkpointer of its own.
      const other = await resumerApp(db, { agentId: 'other-app-bot' });
      const foreign = await other.suspend('other-app:0');
      await other.approve(foreign);
      // Two hundred more of the other app's resolved requests (copies of the real one).
      await db.query(
        `INSERT INTO veridex_approvals
           SELECT (jsonb_populate_record(a, jsonb_build_object(
             'id', a.id || '_' || g, 'thread_id', a.thread_id || '_' || g))).*
           FROM veridex_approvals a, generate_series(1, 200) g WHERE a.id = $1`,
        [foreign.approvalId],
      );
      const app = await resumerApp(db, { registerApprovers: false });
      const first = startResumer({
        graph: app.graph,
        agentId: app.agentId,
        db,
        audit: app.audit,
        pollMs: HOUR,
      });
      await first.runOnce();
      await first.stop();
      const mine = await app.suspend('this-app:payout');
      await app.approve(mine);
      // The app restarts (a deploy): its resumer's first cycle.
      const restarted = startResumer({
        graph: app.graph,
        agentId: app.agentId,
        db,
        audit: app.audit,
        pollMs: HOUR,
      });
      try {
        const outcomes = await restarted.runOnce();
        expect(outcomes.filter((o) => o.outcome === 'not_ours')).toHaveLength(0);
        expect(outcomes).toEqual([
          expect.objectContaining({ approvalId: mine.approvalId, outcome: 'resumed' }),
        ]);
      } finally {
        await restarted.stop();
      }
    });
  },
);
