import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { expect, it } from 'vitest';
import type { Database } from '../../src/db/index.js';
import { type ResumableGraph, type ResumeOutcome, startResumer } from '../../src/nodes/index.js';
import { signAs } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';
import { insiderGraph, suspendedOn } from '../support/insider-graph.js';

async function resumedRow(db: Database, id: string) {
  const { rows } = await db.query<{
    resumed_at: Date | null;
    resume_outcome: string | null;
    resume_error: string | null;
  }>('SELECT resumed_at, resume_outcome, resume_error FROM veridex_approvals WHERE id = $1', [id]);
  return rows[0]!;
}

/** A real compiled graph that holds none of the approvals' threads (another app's graph). */
function otherGraph() {
  return new StateGraph(MessagesAnnotation)
    .addNode('noop', async () => ({ messages: [] }))
    .addEdge(START, 'noop')
    .addEdge('noop', END)
    .compile({ checkpointer: new MemorySaver() });
}

const HOUR = 60 * 60 * 1000;

describeEachDatabase('the resumer', (context) => {
  it('continues a run after an out-of-band dual approval with no client action: the transfer runs once, the resolution is recorded, a second cycle does nothing', async () => {
    const db = context.db();
    const { graph, ledger, approvals, audit } = await insiderGraph(db);
    const pending = await suspendedOn(graph, 't-resume');
    await approvals.decide(pending.approvalId, signAs(pending, 'alice'));
    await approvals.decide(pending.approvalId, signAs(pending, 'bob'));
    expect(ledger.transfers).toHaveLength(0);
    const resumer = startResumer({
      graph,
      agentId: 'payout-bot',
      db,
      approvals,
      audit,
      pollMs: HOUR,
    });
    try {
      const outcomes = await resumer.runOnce();
      expect(outcomes).toEqual([
        expect.objectContaining({
          approvalId: pending.approvalId,
          status: 'approved',
          outcome: 'resumed',
        }),
      ]);
      expect(ledger.transfers).toHaveLength(1);
      expect(await resumer.runOnce()).toEqual([]);
      expect(ledger.transfers).toHaveLength(1);
      expect(await resumedRow(db, pending.approvalId)).toMatchObject({ resume_outcome: 'resumed' });
      const events = await audit.events('t-resume');
      expect(events.filter((event) => event.type === 'run_resumed')).toHaveLength(1);
      expect(events.at(-1)?.type).not.toBe('run_suspended');
    } finally {
      await resumer.stop();
    }
  });

  it('a resolution wakes the resumer at once (NOTIFY): with an hour between polls, the run continues right after the second signature', async () => {
    const db = context.db();
    const { graph, ledger, approvals, audit } = await insiderGraph(db);
    const pending = await suspendedOn(graph, 't-notify');
    let handled!: (outcome: ResumeOutcome) => void;
    const outcome = new Promise<ResumeOutcome>((resolve) => (handled = resolve));
    const resumer = startResumer({
      graph,
      agentId: 'payout-bot',
      db,
      audit,
      pollMs: HOUR,
      onOutcome: handled,
    });
    try {
      expect(await resumer.listening).toBe(true);
      await approvals.decide(pending.approvalId, signAs(pending, 'alice'));
      expect(ledger.transfers).toHaveLength(0);
      await approvals.decide(pending.approvalId, signAs(pending, 'bob'));
      const first = await Promise.race([
        outcome,
        new Promise<'no wake-up'>((resolve) => setTimeout(() => resolve('no wake-up'), 60_000)),
      ]);
      expect(first).toMatchObject({ approvalId: pending.approvalId, outcome: 'resumed' });
      expect(ledger.transfers).toHaveLength(1);
    } finally {
      await resumer.stop();
    }
  });

  it("ignores another schema's notifications and forged ones: they only make it look again", async () => {
    const db = context.db();
    const { graph, ledger, approvals, audit } = await insiderGraph(db);
    const pending = await suspendedOn(graph, 't-forged');
    const outcomes: ResumeOutcome[] = [];
    const resumer = startResumer({
      graph,
      agentId: 'payout-bot',
      db,
      audit,
      pollMs: HOUR,
      onOutcome: (o) => outcomes.push(o),
    });
    try {
      expect(await resumer.listening).toBe(true);
      // Anyone who may connect can NOTIFY: a forged wake-up for a request still pending.
      await db.query(`SELECT pg_notify('veridex_approval_resolved', $1)`, [db.schema]);
      await db.query(`SELECT pg_notify('veridex_approval_resolved', 'someone_else')`);
      await new Promise((resolve) => setTimeout(resolve, 500));
      await resumer.runOnce();
      expect(outcomes).toEqual([]);
      expect(ledger.transfers).toHaveLength(0);
      expect((await approvals.require(pending.approvalId)).status).toBe('pending');
    } finally {
      await resumer.stop();
    }
  });

  it('two resumers on two connections race for one resolution: the run continues once', async () => {
    const db = context.db();
    const other = await context.open();
    const { graph, ledger, approvals, audit } = await insiderGraph(db);
    const pending = await suspendedOn(graph, 't-race');
    await approvals.decide(pending.approvalId, signAs(pending, 'alice'));
    await approvals.decide(pending.approvalId, signAs(pending, 'bob'));
    const first = startResumer({ graph, agentId: 'payout-bot', db, audit, pollMs: HOUR });
    const second = startResumer({ graph, agentId: 'payout-bot', db: other, audit, pollMs: HOUR });
    try {
      const outcomes = (await Promise.all([first.runOnce(), second.runOnce()])).flat();
      expect(outcomes.filter((outcome) => outcome.outcome === 'resumed')).toHaveLength(1);
      expect(outcomes).toHaveLength(1);
      expect(ledger.transfers).toHaveLength(1);
    } finally {
      await first.stop();
      await second.stop();
      await other.close();
    }
  });

  it('a signed rejection resumes the run too, and the transfer never runs', async () => {
    const db = context.db();
    const { graph, ledger, approvals, audit } = await insiderGraph(db);
    const pending = await suspendedOn(graph, 't-reject');
    await approvals.decide(
      pending.approvalId,
      signAs(pending, 'alice', 'reject', { reason: 'no' }),
    );
    const resumer = startResumer({
      graph,
      agentId: 'payout-bot',
      db,
      approvals,
      audit,
      pollMs: HOUR,
    });
    try {
      const [outcome] = await resumer.runOnce();
      expect(outcome).toMatchObject({ status: 'rejected', outcome: 'resumed' });
      expect(ledger.transfers).toHaveLength(0);
      const state = await graph.getState({ configurable: { thread_id: 't-reject' } });
      expect(state.next).toEqual([]);
    } finally {
      await resumer.stop();
    }
  });

  it("leaves another graph's thread alone: that graph's resumer takes it", async () => {
    const db = context.db();
    const { graph, ledger, approvals, audit } = await insiderGraph(db);
    const pending = await suspendedOn(graph, 't-not-ours');
    await approvals.decide(pending.approvalId, signAs(pending, 'alice'));
    await approvals.decide(pending.approvalId, signAs(pending, 'bob'));
    const stranger = startResumer({ graph: otherGraph(), agentId: 'payout-bot', db, pollMs: HOUR });
    const owner = startResumer({ graph, agentId: 'payout-bot', db, audit, pollMs: HOUR });
    try {
      expect(await stranger.runOnce()).toEqual([expect.objectContaining({ outcome: 'not_ours' })]);
      expect(await stranger.runOnce()).toEqual([]);
      expect((await resumedRow(db, pending.approvalId)).resumed_at).toBeNull();
      expect(await owner.runOnce()).toEqual([expect.objectContaining({ outcome: 'resumed' })]);
      expect(ledger.transfers).toHaveLength(1);
    } finally {
      await stranger.stop();
      await owner.stop();
    }
  });

  it('a resume that fails is recorded and retried after its backoff; the tool still runs once', async () => {
    const db = context.db();
    const { graph, ledger, approvals, audit } = await insiderGraph(db);
    const pending = await suspendedOn(graph, 't-retry');
    await approvals.decide(pending.approvalId, signAs(pending, 'alice'));
    await approvals.decide(pending.approvalId, signAs(pending, 'bob'));
    let failures = 1;
    const flaky: ResumableGraph<unknown> = {
      getState: (config) => graph.getState(config),
      invoke: (input, config) => {
        if (failures-- > 0) return Promise.reject(new Error('the model provider is down'));
        return graph.invoke(input, config);
      },
    };
    const seen: ResumeOutcome[] = [];
    const resumer = startResumer({
      graph: flaky,
      agentId: 'payout-bot',
      db,
      audit,
      pollMs: HOUR,
      onOutcome: (outcome) => seen.push(outcome),
    });
    try {
      expect(await resumer.runOnce()).toEqual([
        expect.objectContaining({ outcome: 'failed', error: 'the model provider is down' }),
      ]);
      expect((await resumedRow(db, pending.approvalId)).resume_error).toContain('provider');
      // Within the backoff nothing is retried.
      expect(await resumer.runOnce()).toEqual([]);
      await db.query(
        `UPDATE veridex_approvals SET resume_lease_until = now() - interval '1 second' WHERE id = $1`,
        [pending.approvalId],
      );
      expect(await resumer.runOnce()).toEqual([expect.objectContaining({ outcome: 'resumed' })]);
      expect(ledger.transfers).toHaveLength(1);
      expect(seen.map((outcome) => outcome.outcome)).toEqual(['failed', 'resumed']);
    } finally {
      await resumer.stop();
    }
  });

  it('polls on its own: a decision made elsewhere completes the run while the app only waits', async () => {
    const db = context.db();
    const { graph, ledger, approvals, audit } = await insiderGraph(db);
    const pending = await suspendedOn(graph, 't-poll');
    const done = new Promise<ResumeOutcome>((resolve) => {
      const resumer = startResumer({
        graph,
        agentId: 'payout-bot',
        db,
        audit,
        pollMs: 25,
        onOutcome: (outcome) => {
          void resumer.stop();
          resolve(outcome);
        },
      });
    });
    await approvals.decide(pending.approvalId, signAs(pending, 'alice'));
    await approvals.decide(pending.approvalId, signAs(pending, 'bob'));
    expect(await done).toMatchObject({ outcome: 'resumed' });
    expect(ledger.transfers).toHaveLength(1);
  });
});

it('refuses a poll interval, lease or attempt limit that is not positive (config_invalid)', () => {
  const graph = otherGraph();
  for (const bad of [{ pollMs: 0 }, { leaseMs: -1 }, { maxAttempts: Number.NaN }]) {
    expect(() =>
      startResumer({ graph, agentId: 'payout-bot', db: {} as Database, ...bad }),
    ).toThrow(expect.objectContaining({ code: 'config_invalid' }));
  }
});
