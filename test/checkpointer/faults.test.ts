import { Command } from '@langchain/langgraph';
import { expect, it } from 'vitest';
import { PostgresCheckpointer } from '../../src/checkpointer/index.js';
import type { Database } from '../../src/db/index.js';
import { VeridexError } from '../../src/errors/index.js';
import { describeEachDatabase } from '../support/databases.js';
import { approvalGraph, userMessage } from './fixtures/approval-graph.js';

/** Waits until a backend runs the checkpointer's put and is blocked on a lock; its pid. */
async function blockedPutBackend(admin: Database): Promise<number> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const { rows } = await admin.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity
       WHERE datname = current_database() AND wait_event_type = 'Lock'
         AND query LIKE '%veridex_checkpoint_put_%' AND pid <> pg_backend_pid()`,
    );
    if (rows[0]) return rows[0].pid;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('No checkpoint put blocked on the lock within 10 s.');
}

describeEachDatabase(
  'PostgresCheckpointer when its connection is killed mid-run',
  ({ db, open }) => {
    it('fails the run with db_unavailable and resumes from the last checkpoint after reconnecting', async () => {
      const saver = PostgresCheckpointer.fromDatabase(db());
      const graph = approvalGraph(saver);
      const config = { configurable: { thread_id: 'fault' } };
      await graph.invoke({ messages: [userMessage(1)] }, config);
      const suspendedAt = (await saver.getTuple(config))!.config.configurable!.checkpoint_id;

      // Another session holds the thread row, so the next checkpoint write waits on it.
      const admin = await open();
      let release: () => void = () => undefined;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let locked: () => void = () => undefined;
      const isLocked = new Promise<void>((resolve) => {
        locked = resolve;
      });
      const holder = admin.transaction(async (tx) => {
        await tx.query('SELECT 1 FROM veridex_checkpoint_threads WHERE thread_id = $1 FOR UPDATE', [
          'fault',
        ]);
        locked();
        await held;
      });
      await isLocked;
      const run = graph
        .invoke(new Command({ resume: 'yes' }), config)
        .catch((error: unknown) => error);
      const killer = await open();
      const pid = await blockedPutBackend(killer);
      await killer.query('SELECT pg_terminate_backend($1)', [pid]);
      const error = await run;
      release();
      await holder;

      expect(VeridexError.is(error, 'db_unavailable')).toBe(true);
      expect((error as Error).message).toContain('DATABASE_URL');
      // The killed write left nothing half-done: the newest checkpoint is still the one the
      // run was suspended at, and the resume value and node writes are recorded on it.
      const after = await saver.getTuple(config);
      expect(after!.config.configurable!.checkpoint_id).toBe(suspendedAt);

      // The pool reconnects by itself; resuming the thread finishes the run exactly once.
      const done = await graph.invoke(null, config);
      const texts = done.messages.map((message) => String(message.content));
      expect(texts.slice(1)).toEqual([
        'I will pay invoice 42.',
        'approver said: yes',
        'done after 3 messages',
      ]);
      expect((await saver.verifyThread('fault')).issues).toEqual([]);
    });
  },
  { backends: ['postgres'] },
);
