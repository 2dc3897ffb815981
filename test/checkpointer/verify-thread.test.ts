import { emptyCheckpoint, uuid6 } from '@langchain/langgraph-checkpoint';
import { expect, it } from 'vitest';
import {
  PostgresCheckpointer,
  type VerificationIssue,
  verifyThread,
} from '../../src/checkpointer/index.js';
import type { Database } from '../../src/db/index.js';
import { describeEachDatabase } from '../support/databases.js';

type Config = { configurable: Record<string, unknown> };

/** A thread of five checkpoints with a growing list, a small value and writes on each. */
async function buildThread(saver: PostgresCheckpointer, threadId: string): Promise<string[]> {
  const ids: string[] = [];
  const messages: unknown[] = [];
  let config: Config = { configurable: { thread_id: threadId, checkpoint_ns: '' } };
  for (let step = 0; step < 5; step++) {
    messages.push({ role: 'user', content: `${step} ${'words '.repeat(60)}`, id: `m${step}` });
    const checkpoint = {
      ...emptyCheckpoint(),
      id: uuid6(-1),
      channel_values: { messages: [...messages], step, note: step === 0 ? 'first' : undefined },
      channel_versions: { messages: step + 1, step: step + 1, note: 1 },
    };
    const newVersions: Record<string, number> =
      step === 0 ? { messages: 1, step: 1, note: 1 } : { messages: step + 1, step: step + 1 };
    config = (await saver.put(
      config,
      checkpoint,
      { source: 'loop', step, parents: {} },
      newVersions,
    )) as Config;
    await saver.putWrites(
      config,
      [['messages', [{ role: 'assistant', content: `reply ${step} ${'x'.repeat(300)}` }]]],
      `task-${step}`,
      '~a',
    );
    ids.push(config.configurable.checkpoint_id as string);
  }
  return ids;
}

function kinds(issues: readonly VerificationIssue[], checkpointId?: string): string[] {
  return issues
    .filter((issue) => checkpointId === undefined || issue.checkpointId === checkpointId)
    .map((issue) => issue.kind)
    .sort();
}

async function threadKey(db: Database, threadId: string): Promise<string> {
  const { rows } = await db.query<{ thread_key: string }>(
    'SELECT thread_key FROM veridex_checkpoint_threads WHERE thread_id = $1',
    [threadId],
  );
  return rows[0]!.thread_key;
}

describeEachDatabase('verifyThread', ({ db }) => {
  it('finds nothing wrong with an untouched thread and reports its head hash', async () => {
    const saver = PostgresCheckpointer.fromDatabase(db());
    await buildThread(saver, 't');
    const report = await saver.verifyThread('t');
    expect(report.issues).toEqual([]);
    expect(report.valid).toBe(true);
    expect(report.checkpoints).toBe(5);
    expect(report.headHash).toMatch(/^[0-9a-f]{64}$/);
    expect((await saver.verifyThread('t', { expectedHeadHash: report.headHash! })).valid).toBe(
      true,
    );
    expect(await verifyThread(db(), 'unknown thread')).toMatchObject({
      valid: true,
      checkpoints: 0,
      headHash: null,
    });
  });

  it('counts a checkpoint put again with the same id once, through pruning, and still catches a deleted fork leaf', async () => {
    const saver = PostgresCheckpointer.fromDatabase(db());
    const ids = await buildThread(saver, 'again');
    // Put the third checkpoint again (same id, as a retried step would) and fork from it.
    const third = (await saver.getTuple({
      configurable: { thread_id: 'again', checkpoint_ns: '', checkpoint_id: ids[2] },
    }))!;
    const sameVersions = { messages: 3, step: 3 };
    await saver.put(third.parentConfig!, third.checkpoint, third.metadata!, sameVersions);
    await saver.put(third.parentConfig!, third.checkpoint, third.metadata!, sameVersions);
    const leaf = { ...emptyCheckpoint(), id: uuid6(-1) };
    await saver.put(third.config, leaf, { source: 'fork', step: 3, parents: {} }, {});
    const main = { configurable: { thread_id: 'again', checkpoint_ns: '', checkpoint_id: ids[4] } };
    const next = { ...emptyCheckpoint(), id: uuid6(-1) };
    await saver.put(main, next, { source: 'loop', step: 5, parents: {} }, {});
    expect((await saver.verifyThread('again')).issues).toEqual([]);
    await saver.prune('again', { keepLast: 2 });
    const afterPrune = await saver.verifyThread('again');
    expect(afterPrune.issues).toEqual([]);
    // The fork leaf is neither the newest checkpoint nor anyone's parent: only the count tells.
    await db().query('DELETE FROM veridex_checkpoints WHERE checkpoint_id = $1', [leaf.id]);
    expect(kinds((await saver.verifyThread('again')).issues)).toEqual(['deleted']);
  });

  it('reports a checkpoint whose metadata was edited in SQL as modified', async () => {
    const saver = PostgresCheckpointer.fromDatabase(db());
    const ids = await buildThread(saver, 't');
    await db().query(
      `UPDATE veridex_checkpoints SET metadata = jsonb_set(metadata, '{step}', '99') WHERE checkpoint_id = $1`,
      [ids[2]],
    );
    const report = await saver.verifyThread('t');
    expect(report.valid).toBe(false);
    expect(kinds(report.issues, ids[2])).toEqual(['modified']);
  });

  it('reports every checkpoint whose list used a message edited in SQL', async () => {
    const saver = PostgresCheckpointer.fromDatabase(db());
    const ids = await buildThread(saver, 't');
    await db().query(
      `UPDATE veridex_checkpoint_elements SET body = replace(body, '"3 words', '"3 WORDS')
       WHERE body LIKE '%"3 words%'`,
    );
    const report = await saver.verifyThread('t');
    // Checkpoints 3 and 4 wrote lists containing message 3.
    expect(report.issues.map((issue) => issue.checkpointId).sort()).toEqual(
      [ids[3], ids[4]].sort(),
    );
    expect(kinds(report.issues)).toEqual(['modified', 'modified']);
  });

  it('reports a deleted middle checkpoint and a deleted newest checkpoint', async () => {
    const saver = PostgresCheckpointer.fromDatabase(db());
    const ids = await buildThread(saver, 't');
    await db().query('DELETE FROM veridex_checkpoints WHERE checkpoint_id = ANY($1)', [
      [ids[1], ids[4]],
    ]);
    const report = await saver.verifyThread('t');
    expect(kinds(report.issues, ids[2])).toEqual(['deleted']);
    expect(kinds(report.issues, ids[4])).toEqual(['deleted']);
    expect(
      report.issues.some((issue) => issue.checkpointId === '' && issue.kind === 'deleted'),
    ).toBe(true);
  });

  it('reports checkpoints swapped in SQL as reordered and modified', async () => {
    const saver = PostgresCheckpointer.fromDatabase(db());
    const ids = await buildThread(saver, 't');
    await db().transaction(async (tx) => {
      const swap = 'UPDATE veridex_checkpoints SET checkpoint_id = $2 WHERE checkpoint_id = $1';
      await tx.query(swap, [ids[1], 'swapping']);
      await tx.query(swap, [ids[2], ids[1]]);
      await tx.query(swap, ['swapping', ids[2]]);
    });
    const report = await saver.verifyThread('t');
    expect(report.valid).toBe(false);
    expect(kinds(report.issues)).toContain('reordered');
    expect(kinds(report.issues, ids[1])).toContain('modified');
  });

  it('reports a pending write edited in SQL', async () => {
    const saver = PostgresCheckpointer.fromDatabase(db());
    const ids = await buildThread(saver, 't');
    await db().query(
      `UPDATE veridex_checkpoint_writes SET task_path = '~z' WHERE checkpoint_id = $1`,
      [ids[0]],
    );
    const report = await saver.verifyThread('t');
    expect(report.issues).toEqual([
      expect.objectContaining({ kind: 'modified', checkpointId: ids[0] }),
    ]);
  });

  it('reports a chain rewritten from scratch against a recorded head hash', async () => {
    const saver = PostgresCheckpointer.fromDatabase(db());
    await buildThread(saver, 't');
    const recorded = (await saver.verifyThread('t')).headHash!;
    // Someone with write access deletes the thread and writes a different history: every
    // hash is consistent again, only the recorded head tells.
    await saver.deleteThread('t');
    await buildThread(saver, 't');
    expect((await saver.verifyThread('t')).valid).toBe(true);
    const report = await saver.verifyThread('t', { expectedHeadHash: recorded });
    expect(kinds(report.issues)).toEqual(['modified']);
  });

  it('reports a checkpoint row inserted outside the checkpointer', async () => {
    const saver = PostgresCheckpointer.fromDatabase(db());
    const ids = await buildThread(saver, 't');
    await db().query(
      `INSERT INTO veridex_checkpoints (thread_key, checkpoint_ns, checkpoint_id, parent_checkpoint_id,
         checkpoint, metadata, value_channels, value_refs, new_value_count, parent_hash, hash)
       SELECT thread_key, checkpoint_ns, $2, checkpoint_id, checkpoint, metadata, value_channels,
         value_refs, 0, hash, hash
       FROM veridex_checkpoints WHERE thread_key = $1 AND checkpoint_id = $3`,
      [await threadKey(db(), 't'), uuid6(-1), ids[4]],
    );
    const report = await saver.verifyThread('t');
    expect(kinds(report.issues)).toEqual(['inserted', 'modified']);
  });
});
