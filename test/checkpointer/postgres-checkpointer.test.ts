import {
  BaseCheckpointSaver,
  type Checkpoint,
  DeltaSnapshot,
  ERROR,
  emptyCheckpoint,
  INTERRUPT,
  uuid6,
} from '@langchain/langgraph-checkpoint';
import { expect, it } from 'vitest';
import { PostgresCheckpointer } from '../../src/checkpointer/index.js';
import type { Database } from '../../src/db/index.js';
import { VeridexError } from '../../src/errors/index.js';
import { describeEachDatabase, openBackend, uniqueSchema } from '../support/databases.js';
import { interceptQueries } from '../support/intercept-queries.js';

type Config = { configurable: Record<string, unknown> };

function checkpoint(values: Record<string, unknown>, versions: Record<string, number>): Checkpoint {
  return {
    ...emptyCheckpoint(),
    id: uuid6(-1),
    channel_values: values,
    channel_versions: versions,
  };
}

async function collect<T>(iterator: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterator) items.push(item);
  return items;
}

/** Counts statements sent through a handle, to check round trips. */
function counting(db: Database): { db: Database; calls: () => number } {
  let calls = 0;
  const wrapped = interceptQueries(db, (text, params, options) => {
    calls++;
    return db.query(text, params, options);
  });
  return { db: wrapped, calls: () => calls };
}

describeEachDatabase('PostgresCheckpointer', ({ backend, db, open }) => {
  it('returns pending writes in LangGraph task-path order whatever order they arrived in', async () => {
    const saver = PostgresCheckpointer.fromDatabase(db());
    const config = await saver.put(
      { configurable: { thread_id: 't' } },
      checkpoint({}, {}),
      { source: 'loop', step: 0, parents: {} },
      {},
    );
    await saver.putWrites(
      config,
      [
        ['out', 'b1'],
        ['out', 'b2'],
      ],
      'task-b',
      '~__pregel_pull, b',
    );
    await saver.putWrites(config, [['out', 'input']], 'task-z', '');
    await saver.putWrites(config, [['out', 'a1']], 'task-a', '~__pregel_pull, a');
    await saver.putWrites(config, [['out', 'a-push']], 'task-0', '~__pregel_push, 0');
    const tuple = await saver.getTuple(config);
    // Path first (empty sorts first), then task id, then index.
    expect(tuple!.pendingWrites).toEqual([
      ['task-z', 'out', 'input'],
      ['task-a', 'out', 'a1'],
      ['task-b', 'out', 'b1'],
      ['task-b', 'out', 'b2'],
      ['task-0', 'out', 'a-push'],
    ]);
  });

  it('keeps the first regular write but replaces special writes such as errors and interrupts', async () => {
    const saver = PostgresCheckpointer.fromDatabase(db());
    const config = await saver.put(
      { configurable: { thread_id: 't' } },
      checkpoint({}, {}),
      { source: 'loop', step: 0, parents: {} },
      {},
    );
    await saver.putWrites(config, [['out', 'first']], 'task');
    await saver.putWrites(config, [['out', 'second']], 'task');
    await saver.putWrites(config, [[ERROR, 'boom 1']], 'failing');
    await saver.putWrites(config, [[ERROR, 'boom 2']], 'failing');
    await saver.putWrites(config, [[INTERRUPT, [{ value: 'ask' }]]], 'asking');
    const tuple = await saver.getTuple(config);
    expect(tuple!.pendingWrites).toEqual(
      expect.arrayContaining([
        ['task', 'out', 'first'],
        ['failing', ERROR, 'boom 2'],
        ['asking', INTERRUPT, [{ value: 'ask' }]],
      ]),
    );
    expect(tuple!.pendingWrites).toHaveLength(3);
  });

  it('lists newest first with limit, before and a metadata filter, across pages', async () => {
    const saver = PostgresCheckpointer.fromDatabase(db(), { listPageSize: 2 });
    const ids: string[] = [];
    let config: Config = { configurable: { thread_id: 'list', checkpoint_ns: '' } };
    for (let step = 0; step < 5; step++) {
      const source = step % 2 === 0 ? 'loop' : 'input';
      config = (await saver.put(
        config,
        checkpoint({ step }, { step: step + 1 }),
        { source, step, parents: {} },
        { step: step + 1 },
      )) as Config;
      ids.push(config.configurable.checkpoint_id as string);
    }
    await saver.put(
      { configurable: { thread_id: 'other' } },
      checkpoint({}, {}),
      { source: 'loop', step: 0, parents: {} },
      {},
    );
    const thread = { configurable: { thread_id: 'list', checkpoint_ns: '' } };
    const newestFirst = [...ids].reverse();
    const all = await collect(saver.list(thread));
    expect(all.map((tuple) => tuple.checkpoint.id)).toEqual(newestFirst);
    expect(all.map((tuple) => tuple.checkpoint.channel_values.step)).toEqual([4, 3, 2, 1, 0]);
    expect(
      (await collect(saver.list(thread, { limit: 3 }))).map((tuple) => tuple.checkpoint.id),
    ).toEqual(newestFirst.slice(0, 3));
    const before = { configurable: { checkpoint_id: ids[3] } };
    expect(
      (await collect(saver.list(thread, { before }))).map((tuple) => tuple.checkpoint.id),
    ).toEqual(newestFirst.slice(2));
    const loops = await collect(saver.list(thread, { filter: { source: 'loop' } }));
    expect(loops.map((tuple) => tuple.metadata?.step)).toEqual([4, 2, 0]);
    // Without a thread: every thread, paged through the general statement.
    const everything = await collect(saver.list({ configurable: {} }));
    expect(everything).toHaveLength(6);
    expect(new Set(everything.map((tuple) => tuple.config.configurable!.thread_id))).toEqual(
      new Set(['list', 'other']),
    );
  });

  it('rebuilds delta-channel history like the base class walk does, in one statement', async () => {
    const { db: counted, calls } = counting(db());
    const saver = PostgresCheckpointer.fromDatabase(counted);
    await saver.setup();
    const meta = { source: 'loop' as const, step: 0, parents: {} };
    for (const checkpointNs of ['', 'child:1']) {
      const root = { configurable: { thread_id: 'delta', checkpoint_ns: checkpointNs } };
      const c0 = await saver.put(
        root,
        checkpoint({ log: new DeltaSnapshot(['seed']), other: [1] }, { log: 1, other: 1 }),
        meta,
        { log: 1, other: 1 },
      );
      await saver.putWrites(
        c0,
        [
          ['log', ['w0']],
          ['other', [2]],
        ],
        'task-b',
        '~b',
      );
      await saver.putWrites(c0, [['log', ['w0-a']]], 'task-a', '~a');
      const c1 = await saver.put(c0, checkpoint({}, { log: 2, other: 1 }), meta, { log: 2 });
      await saver.putWrites(c1, [['log', ['w1']]], 'task-c', '~c');
      const c2 = await saver.put(c1, checkpoint({}, { log: 3, other: 1 }), meta, { log: 3 });
      // A fork from c1: only on-path ancestors count.
      const fork = await saver.put(c1, checkpoint({}, { log: 3, other: 1 }), meta, { log: 3 });
      await saver.putWrites(c2, [['log', ['pending at target']]], 'task-d', '~d');
      for (const target of [
        c2,
        fork,
        c1,
        { configurable: { thread_id: 'delta', checkpoint_ns: checkpointNs } },
      ]) {
        for (const channels of [['log'], ['log', 'other', 'never']]) {
          const before = calls();
          const ours = await saver.getDeltaChannelHistory({ config: target, channels });
          expect(calls() - before).toBe(1);
          const base = await BaseCheckpointSaver.prototype.getDeltaChannelHistory.call(saver, {
            config: target,
            channels,
          });
          expect(ours).toEqual(base);
        }
      }
      const history = await saver.getDeltaChannelHistory({ config: c2, channels: ['log'] });
      expect(history.log!.writes.map((write) => write[2])).toEqual([['w0-a'], ['w0'], ['w1']]);
      expect(history.log!.seed).toBeInstanceOf(DeltaSnapshot);
    }
  });

  it('answers getTuple and put in one statement each', async () => {
    const { db: counted, calls } = counting(db());
    const saver = PostgresCheckpointer.fromDatabase(counted);
    await saver.setup();
    const messages = Array.from({ length: 5 }, (_, index) => ({
      text: `${index} ${'x'.repeat(300)}`,
    }));
    let before = calls();
    const config = await saver.put(
      { configurable: { thread_id: 'rt' } },
      checkpoint({ messages, n: 1 }, { messages: 1, n: 1 }),
      { source: 'loop', step: 0, parents: {} },
      { messages: 1, n: 1 },
    );
    expect(calls() - before).toBe(1);
    before = calls();
    await saver.putWrites(
      config,
      [
        ['messages', [{ text: 'y'.repeat(300) }]],
        ['n', 2],
      ],
      'task',
    );
    expect(calls() - before).toBe(1);
    before = calls();
    expect((await saver.getTuple(config))!.checkpoint.channel_values.messages).toEqual(messages);
    expect(calls() - before).toBe(1);
  });

  it('commits put and putWrites asynchronously only when synchronousCommit is false', async () => {
    // Runs each statement in a transaction and reads the setting its commit will use.
    const observe = (base: Database) => {
      const seen: string[] = [];
      const wrapped = interceptQueries(base, (text, params) =>
        base.transaction(async (tx) => {
          const result = await tx.query(text, params);
          const { rows } = await tx.query<{ value: string }>(
            "SELECT current_setting('synchronous_commit') AS value",
          );
          if (/veridex_checkpoint_put/.test(text)) seen.push(rows[0]!.value);
          return result;
        }),
      );
      return { db: wrapped, seen };
    };
    const write = async (saver: PostgresCheckpointer, threadId: string) => {
      const config = await saver.put(
        { configurable: { thread_id: threadId } },
        checkpoint({ n: 1 }, { n: 1 }),
        { source: 'loop', step: 0, parents: {} },
        { n: 1 },
      );
      await saver.putWrites(config, [['n', 2]], 'task');
    };
    const durable = observe(db());
    await write(PostgresCheckpointer.fromDatabase(durable.db), 'sync');
    expect(durable.seen).toEqual(['on', 'on']);
    const relaxed = observe(db());
    const saver = PostgresCheckpointer.fromDatabase(relaxed.db, { synchronousCommit: false });
    await write(saver, 'async');
    expect(relaxed.seen).toEqual(['off', 'off']);
    // The setting is local to the statement's transaction: the next one is back to normal.
    const { rows } = await db().query<{ value: string }>(
      "SELECT current_setting('synchronous_commit') AS value",
    );
    expect(rows[0]!.value).toBe('on');
    expect((await saver.getTuple({ configurable: { thread_id: 'async' } }))!.pendingWrites).toEqual(
      [['task', 'n', 2]],
    );
  });

  it('settles and closes only after the writes a caller did not await', async () => {
    const saver = PostgresCheckpointer.fromDatabase(db());
    await saver.setup();
    const finished: string[] = [];
    const config = saver.put(
      { configurable: { thread_id: 'late' } },
      checkpoint({ n: 1 }, { n: 1 }),
      { source: 'loop', step: 0, parents: {} },
      { n: 1 },
    );
    void config.then(() => finished.push('put'));
    const writes = config.then((stored) => {
      const pending = saver.putWrites(stored, [['n', 2]], 'task');
      void pending.then(() => finished.push('writes'));
    });
    await config;
    await writes;
    await saver.settled();
    expect(finished).toEqual(['put', 'writes']);
    // close() of a checkpointer that owns its database waits the same way.
    const owner = new PostgresCheckpointer({ db: open(), ownsDatabase: true });
    const last = owner.put(
      { configurable: { thread_id: 'closing' } },
      checkpoint({ n: 1 }, { n: 1 }),
      { source: 'loop', step: 0, parents: {} },
      { n: 1 },
    );
    await owner.close();
    await expect(last).resolves.toMatchObject({ configurable: { thread_id: 'closing' } });
    expect(await saver.getTuple({ configurable: { thread_id: 'closing' } })).toBeDefined();
  });

  it('stores concurrent writes of one thread in fewer statements, each acknowledged once committed', async () => {
    const { db: counted, calls } = counting(db());
    const saver = PostgresCheckpointer.fromDatabase(counted);
    await saver.setup();
    const config = await saver.put(
      { configurable: { thread_id: 'burst' } },
      checkpoint({}, {}),
      { source: 'loop', step: 0, parents: {} },
      {},
    );
    const before = calls();
    await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        saver.putWrites(config, [['out', index]], `task-${index}`, `~${index}`),
      ),
    );
    expect(calls() - before).toBeLessThan(10);
    const tuple = await saver.getTuple(config);
    expect(tuple!.pendingWrites!.map((write) => write[2]).sort()).toEqual([
      0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
    ]);
  });

  it('fails only the call whose writes the database rejects when calls were batched', async () => {
    const saver = PostgresCheckpointer.fromDatabase(db());
    const config = await saver.put(
      { configurable: { thread_id: 'mixed' } },
      checkpoint({}, {}),
      { source: 'loop', step: 0, parents: {} },
      {},
    );
    const results = await Promise.allSettled(
      // PostgreSQL text cannot hold NUL, so the third call's channel name is refused.
      ['a', 'b', 'bad\u0000channel', 'c'].map((channel, index) =>
        saver.putWrites(config, [[channel, index]], `task-${index}`),
      ),
    );
    expect(results.map((result) => result.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    const rejected = results[2] as PromiseRejectedResult;
    expect(VeridexError.is(rejected.reason, 'db_query_failed')).toBe(true);
    const tuple = await saver.getTuple(config);
    expect(tuple!.pendingWrites!.map((write) => write[1]).sort()).toEqual(['a', 'b', 'c']);
  });

  it('fails with checkpoint_invalid when a stored list element was deleted behind its back', async () => {
    const saver = PostgresCheckpointer.fromDatabase(db());
    const messages = Array.from({ length: 4 }, (_, index) => ({
      text: `${index} ${'x'.repeat(300)}`,
    }));
    const config = await saver.put(
      { configurable: { thread_id: 'broken' } },
      checkpoint({ messages }, { messages: 1 }),
      { source: 'loop', step: 0, parents: {} },
      { messages: 1 },
    );
    await db().query(
      'DELETE FROM veridex_checkpoint_elements WHERE ctid = (SELECT min(ctid) FROM veridex_checkpoint_elements)',
    );
    // The writer answers from the tuple it cached (the token does not cover element rows);
    // a reader without that cache, like another process, reads the damage.
    expect((await saver.getTuple(config))!.checkpoint.channel_values.messages).toEqual(messages);
    const reader = PostgresCheckpointer.fromDatabase(db());
    const error = await reader.getTuple(config).catch((caught: unknown) => caught);
    expect(VeridexError.is(error, 'checkpoint_invalid')).toBe(true);
    expect((error as VeridexError).details).toMatchObject({ expected: 4, actual: 3 });
    expect((error as Error).message).toContain('verifyThread');
  });

  it('rejects a put without a thread id and writes without a checkpoint id with config_invalid', async () => {
    const saver = PostgresCheckpointer.fromDatabase(db());
    const meta = { source: 'loop' as const, step: 0, parents: {} };
    for (const call of [
      () => saver.put({}, checkpoint({}, {}), meta, {}),
      () => saver.put({ configurable: { checkpoint_ns: '' } }, checkpoint({}, {}), meta, {}),
      () => saver.putWrites({ configurable: { thread_id: 't' } }, [['a', 1]], 'task'),
      () => saver.prune('t', { keepLast: 0 }),
    ]) {
      const error = await call().catch((caught: unknown) => caught);
      expect(VeridexError.is(error, 'config_invalid')).toBe(true);
    }
  });

  it('sets up one schema from several checkpointers at once, and again as a no-op', async () => {
    const schema = uniqueSchema();
    const handles = await Promise.all([1, 2, 3].map(() => openBackend(backend, schema)));
    try {
      await Promise.all(handles.map((handle) => PostgresCheckpointer.fromDatabase(handle).setup()));
      await PostgresCheckpointer.fromDatabase(handles[0]!).setup();
      const { rows } = await handles[0]!.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
         WHERE n.nspname = $1 AND p.proname LIKE 'veridex_checkpoint_%'`,
        [schema],
      );
      // put, writes, get, list of a thread, delta history.
      expect(rows[0]!.n).toBe(5);
      const saver = PostgresCheckpointer.fromDatabase(handles[1]!);
      const config = await saver.put(
        { configurable: { thread_id: 't' } },
        checkpoint({ a: 1 }, { a: 1 }),
        { source: 'loop', step: 0, parents: {} },
        { a: 1 },
      );
      expect((await saver.getTuple(config))!.checkpoint.channel_values).toEqual({ a: 1 });
    } finally {
      await handles[0]!.query(`DROP SCHEMA "${schema}" CASCADE`);
      for (const handle of handles) await handle.close();
    }
  });
});

describeEachDatabase(
  'PostgresCheckpointer.fromUrl',
  () => {
    it('rejects an unknown URL scheme with config_invalid without leaking the URL', async () => {
      const saver = PostgresCheckpointer.fromUrl('mysql://root:hunter2@db/app');
      const error = await saver.setup().catch((caught: unknown) => caught);
      expect(VeridexError.is(error, 'config_invalid')).toBe(true);
      expect((error as Error).message).not.toContain('hunter2');
    });
  },
  { backends: ['pglite'] },
);
