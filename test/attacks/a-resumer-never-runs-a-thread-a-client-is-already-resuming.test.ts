// Resumer pass (startResumer + migration 0019). A HITL client (Agent Chat UI, the prebuilt
// agent's `resume`, any `new Command({ resume: decisions })`) decides IN the graph: the governed
// node applies the signed decisions and runs the call in the same invocation. The decision's
// commit fires `veridex_approval_resolved`, which wakes the app's resumer at exactly that moment:
// the request is resolved and not `resumed_at`, and the thread's checkpoint still shows the
// interrupt (the client's run has not stored its next checkpoint yet), so the resumer resumes
// the same thread concurrently. The at-most-once ledger stops the approved transfer from running
// twice, but not what follows it: both runs go on from the same checkpoint, the model is asked
// twice, and each copy proposes its next call under a fresh id — an e-mail (a `write` tool,
// allowed without approval) is sent twice. On PostgreSQL this happens with no help (the NOTIFY
// lands while the client's step is still being stored); below, the client's checkpoint write is
// held until the resumer has acted, so the timing does not depend on the machine's load.
// PostgreSQL only: on in-process PGlite the notification arrives before the client's run reaches
// the call, so the resumer re-raises the interrupt, marks the request resumed and never looks again.
// Secure: a request decided inside a run is not the resumer's (e.g. the decision marks it taken
// by the run in the same transaction), or the resumer holds a per-thread lock that every run of
// the thread takes, so two runs never continue one thread at once.
import { Command } from '@langchain/langgraph';
import { expect, it } from 'vitest';
import { PostgresCheckpointer } from '../../src/checkpointer/index.js';
import { type ResumeOutcome, startResumer } from '../../src/nodes/index.js';
import { signAs } from '../support/approvers.js';
import { describeEachDatabase } from '../support/databases.js';
import { eventually, newCounters, resumerApp } from './fixtures/resumer-app.js';

describeEachDatabase(
  'a resumer woken while a client resumes the thread in the graph',
  (context) => {
    it('the thread runs on once: the model is asked once after the transfer and the e-mail goes out once', async () => {
      const db = context.db();
      const counters = newCounters();
      // The app's worker (runs the resumer) and the app's API process (serves HITL clients).
      const worker = await resumerApp(db, {
        counters,
        checkpointer: PostgresCheckpointer.fromDatabase(db),
        afterTransfer: 'notify',
      });
      const outcomes: ResumeOutcome[] = [];
      let resumerActed!: () => void;
      const acted = new Promise<void>((resolve) => (resumerActed = resolve));
      const slowStore = PostgresCheckpointer.fromDatabase(db);
      const put = slowStore.put.bind(slowStore);
      let held = false;
      slowStore.put = async (config, checkpoint, metadata, versions) => {
        // The client's first checkpoint after the transfer ran: stored late (a slow database).
        if (!held && counters.transfers.length > 0) {
          held = true;
          await Promise.race([acted, new Promise((resolve) => setTimeout(resolve, 10_000))]);
        }
        return put(config, checkpoint, metadata, versions);
      };
      const api = await resumerApp(db, {
        counters,
        checkpointer: slowStore,
        afterTransfer: 'notify',
        registerApprovers: false,
      });
      const pending = await api.suspend('t-hitl');
      expect(counters.modelTurns).toBe(1);

      const resumer = startResumer({
        graph: worker.graph,
        agentId: 'payout-bot',
        db,
        audit: worker.audit,
        pollMs: 200,
        config: { durability: 'sync' },
        onOutcome: (outcome) => {
          outcomes.push(outcome);
          if (outcome.outcome !== 'failed') resumerActed();
        },
      });
      try {
        await resumer.listening;
        // The client approves in the graph, as LangChain's HITL protocol does.
        await api.graph.invoke(
          new Command({ resume: [signAs(pending, 'alice'), signAs(pending, 'bob')] }),
          { configurable: { thread_id: 't-hitl' }, durability: 'sync' },
        );
        await eventually(() => outcomes.some((o) => o.outcome !== 'failed'), 5_000);
        expect(counters.transfers).toEqual(['50000.00']);
        // model: the transfer; after it: the e-mail; after that: done.
        expect(counters.modelTurns).toBe(3);
        expect(counters.sent).toBe(1);
      } finally {
        await resumer.stop();
      }
    });
  },
  { backends: ['postgres'] },
);
