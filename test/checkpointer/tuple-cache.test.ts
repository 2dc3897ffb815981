import {
  type Checkpoint,
  type CheckpointTuple,
  ERROR,
  emptyCheckpoint,
  INTERRUPT,
  uuid6,
} from '@langchain/langgraph-checkpoint';
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { PostgresCheckpointer } from '../../src/checkpointer/index.js';
import { jsonbText } from '../../src/checkpointer/jsonb-order.js';
import type { Database } from '../../src/db/index.js';
import { describeEachDatabase } from '../support/databases.js';
import { interceptQueries } from '../support/intercept-queries.js';

type Config = { configurable: Record<string, unknown> };

/** Records how many rows each getTuple statement returned (1 = only "unchanged"). */
function recordingReads(db: Database): { db: Database; rows: number[] } {
  const rows: number[] = [];
  const wrapped = interceptQueries(db, async (text, params, options) => {
    const result = await db.query(text, params, options);
    if (text.includes('veridex_checkpoint_get_unless')) rows.push(result.rows.length);
    return result;
  });
  return { db: wrapped, rows };
}

const message = (index: number) => ({ role: 'user', text: `${index} ${'m'.repeat(300)}` });

function checkpointOf(
  values: Record<string, unknown>,
  versions: Record<string, number | string>,
): Checkpoint {
  return {
    ...emptyCheckpoint(),
    id: uuid6(-1),
    channel_values: values,
    channel_versions: versions,
  };
}

/** What a reader without a cache gets: the truth the cached answer must equal. */
function expectSameTuple(cached: CheckpointTuple | undefined, fresh: CheckpointTuple | undefined) {
  expect(cached).toEqual(fresh);
  // Key order too: metadata comes back in jsonb's order from the table, so from the cache.
  expect(JSON.stringify(cached?.metadata)).toBe(JSON.stringify(fresh?.metadata));
}

describeEachDatabase('PostgresCheckpointer tuple cache', ({ db, open }) => {
  it('confirms an unchanged checkpoint in a one-row statement and returns what a fresh read returns', async () => {
    const { db: recorded, rows } = recordingReads(db());
    const saver = PostgresCheckpointer.fromDatabase(recorded);
    const reader = PostgresCheckpointer.fromDatabase(db(), { tupleCacheBytes: 0 });
    let config: Config = { configurable: { thread_id: 'cached', checkpoint_ns: '' } };
    const messages: unknown[] = [];
    for (let step = 0; step < 4; step++) {
      messages.push(message(step));
      config = (await saver.put(
        config,
        checkpointOf(
          { messages: [...messages], bytes: new Uint8Array([step, 1, 2]) },
          {
            messages: step + 1,
            bytes: step + 1,
          },
        ),
        { source: 'loop', step, parents: {}, zeta: 1, a: { long_key: 2, k: 3 } } as never,
        { messages: step + 1, bytes: step + 1 },
      )) as Config;
      await saver.putWrites(config, [['messages', [message(100 + step)]]], `task-${step}`);
      // A regular write never replaces the first one stored; a special write does.
      await saver.putWrites(config, [['messages', [message(200 + step)]]], `task-${step}`);
      await saver.putWrites(config, [[ERROR, { message: `boom ${step}` }]], 'failing');
      await saver.putWrites(config, [[ERROR, { message: `bang ${step}` }]], 'failing');
      const latest = { configurable: { thread_id: 'cached', checkpoint_ns: '' } };
      expectSameTuple(await saver.getTuple(latest), await reader.getTuple(latest));
      expectSameTuple(await saver.getTuple(config), await reader.getTuple(config));
    }
    expect(rows).toEqual(Array(8).fill(1));
    // Values handed out are copies: changing them does not change the next answer.
    const first = await saver.getTuple(config);
    (first!.checkpoint.channel_values.bytes as Uint8Array)[0] = 99;
    (first!.checkpoint.channel_values.messages as unknown[]).push('extra');
    expectSameTuple(await saver.getTuple(config), await reader.getTuple(config));
  });

  it('reads again when another process wrote to the thread, never answering stale', async () => {
    const { db: recorded, rows } = recordingReads(db());
    const saver = PostgresCheckpointer.fromDatabase(recorded);
    const other = PostgresCheckpointer.fromDatabase(await open());
    const latest = { configurable: { thread_id: 'shared', checkpoint_ns: '' } };
    const first = await saver.put(
      latest,
      checkpointOf({ n: 1 }, { n: 1 }),
      { source: 'loop', step: 0, parents: {} },
      { n: 1 },
    );
    expect((await saver.getTuple(latest))!.checkpoint.channel_values).toEqual({ n: 1 });
    // The other process adds a pending write to the same checkpoint...
    await other.putWrites(first, [['n', 5]], 'elsewhere');
    expect((await saver.getTuple(latest))!.pendingWrites).toEqual([['elsewhere', 'n', 5]]);
    // ...then a new checkpoint.
    await other.put(
      first,
      checkpointOf({ n: 2 }, { n: 2 }),
      { source: 'loop', step: 1, parents: {} },
      { n: 2 },
    );
    const seen = await saver.getTuple(latest);
    expect(seen!.checkpoint.channel_values).toEqual({ n: 2 });
    expect(seen!.pendingWrites).toEqual([]);
    // Cached from a put (1 row), then one full read after each foreign write, then cached.
    expect(rows.map((count) => count === 1)).toEqual([true, false, false]);
    await saver.getTuple(latest);
    expect(rows.at(-1)).toBe(1);
    // After deleteThread elsewhere there is nothing, whatever this process cached.
    await other.deleteThread('shared');
    expect(await saver.getTuple(latest)).toBeUndefined();
  });

  it('answers like a reader without a cache under any mix of puts, forks, writes, prunes and a second writer', async () => {
    const channels = ['messages', 'count', 'bytes', 'doc'] as const;
    type Channel = (typeof channels)[number];
    const operation = fc.oneof(
      fc.record({
        kind: fc.constant('put' as const),
        by: fc.integer({ min: 0, max: 1 }),
        fork: fc.boolean(),
        changed: fc.subarray([...channels], { minLength: 1 }),
        // A channel whose version moves without a new value: the put must not carry it.
        bumped: fc.option(fc.constantFrom(...channels), { nil: undefined }),
        metadata: fc.dictionary(
          fc.string({ unit: fc.constantFrom('a', 'bb', 'é', '日', 'Z', '_'), maxLength: 4 }),
          fc.oneof(fc.integer(), fc.string({ maxLength: 3 }), fc.boolean()),
          { maxKeys: 4 },
        ),
      }),
      fc.record({
        kind: fc.constant('writes' as const),
        by: fc.integer({ min: 0, max: 1 }),
        latest: fc.boolean(),
        task: fc.constantFrom('t1', 't2'),
        special: fc.constantFrom(undefined, ERROR, INTERRUPT),
      }),
      fc.record({ kind: fc.constant('get' as const), latest: fc.boolean() }),
      fc.record({ kind: fc.constant('prune' as const), by: fc.integer({ min: 0, max: 1 }) }),
    );
    const writers = [
      PostgresCheckpointer.fromDatabase(db()),
      PostgresCheckpointer.fromDatabase(await open()),
    ] as const;
    const reader = PostgresCheckpointer.fromDatabase(db(), { tupleCacheBytes: 0 });
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(operation, { minLength: 1, maxLength: 14 }),
        fc.boolean(),
        fc.nat(),
        async (operations, stringVersions, seed) => {
          const threadId = `prop-${run++}`;
          const address = (checkpointId?: string) => ({
            configurable: {
              thread_id: threadId,
              checkpoint_ns: '',
              ...(checkpointId ? { checkpoint_id: checkpointId } : {}),
            },
          });
          const versionsOf = new Map<string, Record<string, number | string>>();
          const ids: string[] = [];
          let counter = 0;
          let pick = seed;
          const choose = <T>(items: readonly T[]): T => items[pick++ % items.length]!;
          const version = () =>
            stringVersions ? `v${String(++counter).padStart(6, '0')}` : ++counter;
          const value = (channel: Channel): unknown =>
            channel === 'messages'
              ? Array.from({ length: 1 + (counter % 3) }, (_, index) => message(counter + index))
              : channel === 'count'
                ? counter
                : channel === 'bytes'
                  ? new Uint8Array([counter % 256, 7])
                  : { note: `doc ${counter}`, nested: { z: 1, a: [counter] } };
          for (const op of operations) {
            if (op.kind === 'put') {
              const parent = op.fork && ids.length > 0 ? choose(ids) : ids.at(-1);
              const versions = { ...(parent ? versionsOf.get(parent) : {}) };
              const values: Record<string, unknown> = {};
              const newVersions: Record<string, number | string> = {};
              for (const channel of op.changed) {
                versions[channel] = newVersions[channel] = version();
              }
              if (op.bumped && !(op.bumped in newVersions)) versions[op.bumped] = version();
              for (const channel of Object.keys(versions))
                values[channel] = value(channel as Channel);
              const checkpoint = checkpointOf(values, versions);
              await writers[op.by]!.put(
                address(parent),
                checkpoint,
                { source: 'loop', step: ids.length, parents: {}, ...op.metadata },
                newVersions,
              );
              versionsOf.set(checkpoint.id, versions);
              ids.push(checkpoint.id);
            } else if (op.kind === 'writes' && ids.length > 0) {
              const target = op.latest ? ids.at(-1)! : choose(ids);
              const writes: Array<[string, unknown]> = op.special
                ? [
                    [
                      op.special,
                      op.special === ERROR ? { message: `e${counter}` } : [`i${counter}`],
                    ],
                  ]
                : [
                    ['count', ++counter],
                    ['messages', [message(counter)]],
                  ];
              await writers[op.by]!.putWrites(address(target), writes, op.task);
            } else if (op.kind === 'get') {
              const config = address(op.latest || ids.length === 0 ? undefined : choose(ids));
              for (let again = 0; again < 2; again++) {
                expectSameTuple(await writers[0].getTuple(config), await reader.getTuple(config));
              }
            } else if (op.kind === 'prune') {
              await writers[op.by]!.prune(threadId, { keepLast: 1 });
              const kept = new Set<string>();
              for await (const tuple of reader.list(address())) {
                kept.add(tuple.config.configurable!.checkpoint_id as string);
              }
              ids.splice(0, ids.length, ...ids.filter((id) => kept.has(id)));
            }
          }
          expectSameTuple(await writers[0].getTuple(address()), await reader.getTuple(address()));
        },
      ),
      { numRuns: 40 },
    );
  });
});

it('orders JSON object keys as PostgreSQL jsonb prints them', async () => {
  const { PGlite } = await import('@electric-sql/pglite');
  const pglite = await PGlite.create();
  try {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (value) => {
        const json = JSON.stringify(value);
        fc.pre(!json.includes('\\u0000'));
        const { rows } = await pglite.query<{ text: string }>('SELECT $1::jsonb::text AS text', [
          json,
        ]);
        expect(jsonbText(json)).toBe(JSON.stringify(JSON.parse(rows[0]!.text)));
      }),
      { numRuns: 300 },
    );
  } finally {
    await pglite.close();
  }
});
