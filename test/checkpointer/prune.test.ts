import { Command } from '@langchain/langgraph';
import {
  type Checkpoint,
  DeltaSnapshot,
  emptyCheckpoint,
  INTERRUPT,
  uuid6,
} from '@langchain/langgraph-checkpoint';
import { expect, it } from 'vitest';
import { PostgresCheckpointer } from '../../src/checkpointer/index.js';
import type { Database } from '../../src/db/index.js';
import { describeEachDatabase } from '../support/databases.js';
import { approvalGraph, userMessage } from './fixtures/approval-graph.js';

type Config = { configurable: Record<string, unknown> };
const meta = { source: 'loop' as const, step: 0, parents: {} };

function checkpoint(values: Record<string, unknown>, versions: Record<string, number>): Checkpoint {
  return {
    ...emptyCheckpoint(),
    id: uuid6(-1),
    channel_values: values,
    channel_versions: versions,
  };
}

async function count(db: Database, table: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
  return rows[0]!.n;
}

describeEachDatabase('PostgresCheckpointer.prune', ({ db, open }) => {
  it('prunes a thread suspended in interrupt() and the run still resumes with Command', async () => {
    const saver = PostgresCheckpointer.fromDatabase(db());
    const graph = approvalGraph(saver);
    const config = { configurable: { thread_id: 'payments' } };
    for (let round = 0; round < 3; round++) {
      await graph.invoke({ messages: [userMessage(round)] }, config);
      await graph.invoke(new Command({ resume: `yes ${round}` }), config);
    }
    const suspended = await graph.invoke({ messages: [userMessage(3)] }, config);
    const pending = (suspended as { __interrupt__?: Array<{ value: unknown }> }).__interrupt__;
    expect(pending?.[0]?.value).toEqual({
      question: 'Pay 12.50 EUR?',
      amount: 1250,
    });
    const before = await count(db(), 'veridex_checkpoints');

    const result = await saver.prune('payments', { keepLast: 1 });

    expect(result.checkpoints).toBeGreaterThan(10);
    expect(await count(db(), 'veridex_checkpoints')).toBe(before - result.checkpoints);
    expect((await saver.verifyThread('payments')).issues).toEqual([]);
    const state = await graph.getState(config);
    expect(state.next).toEqual(['approve']);
    const done = await graph.invoke(new Command({ resume: 'approved after prune' }), config);
    const texts = done.messages.map((message) => String(message.content));
    expect(texts.filter((text) => text.startsWith('approver said'))).toEqual([
      'approver said: yes 0',
      'approver said: yes 1',
      'approver said: yes 2',
      'approver said: approved after prune',
    ]);
    expect(texts.at(-1)).toBe(`done after ${done.messages.length - 1} messages`);
    expect((await saver.verifyThread('payments')).valid).toBe(true);
  });

  it('removes values and list elements only pruned checkpoints used', async () => {
    const saver = PostgresCheckpointer.fromDatabase(db());
    const shared = Array.from({ length: 3 }, (_, index) => ({
      text: `shared ${index} ${'s'.repeat(200)}`,
    }));
    const root = { configurable: { thread_id: 'gc', checkpoint_ns: '' } };
    const base = await saver.put(root, checkpoint({ messages: shared }, { messages: 1 }), meta, {
      messages: 1,
    });
    // A side branch with its own message and a large blob, then the main line.
    const side = [...shared, { text: `side only ${'q'.repeat(200)}` }];
    await saver.put(
      base,
      checkpoint({ messages: side, report: 'r'.repeat(500) }, { messages: 2, report: 2 }),
      meta,
      { messages: 2, report: 2 },
    );
    let main: Config = base as Config;
    for (let step = 0; step < 3; step++) {
      const messages = [...shared, { text: `main ${step} ${'m'.repeat(200)}` }];
      main = (await saver.put(main, checkpoint({ messages }, { messages: 3 + step }), meta, {
        messages: 3 + step,
      })) as Config;
    }
    expect(await count(db(), 'veridex_checkpoint_blobs')).toBe(1);
    const result = await saver.prune('gc', { keepLast: 1 });
    expect(result.checkpoints).toBe(4);
    expect(result.blobs).toBe(1);
    const { rows } = await db().query<{ body: string }>(
      'SELECT body FROM veridex_checkpoint_elements',
    );
    const bodies = rows.map((row) => JSON.parse(row.body).text as string).sort();
    expect(bodies).toEqual(
      [...shared.map((each) => each.text), `main 2 ${'m'.repeat(200)}`].sort(),
    );
    expect((await saver.getTuple(root))!.checkpoint.channel_values.messages).toEqual([
      ...shared,
      { text: `main 2 ${'m'.repeat(200)}` },
    ]);
    expect((await saver.verifyThread('gc')).valid).toBe(true);
  });

  it('rewrites a list whose cached sequence another process pruned, instead of losing it', async () => {
    const first = PostgresCheckpointer.fromDatabase(db());
    const second = PostgresCheckpointer.fromDatabase(await open());
    const message = (label: string) => ({ text: `${label} ${'w'.repeat(300)}` });
    const root = { configurable: { thread_id: 'stale', checkpoint_ns: '' } };
    const branch = ['a0', 'a1', 'a2'].map(message);
    let config: Config = root;
    const forkPoint: Config[] = [];
    for (let step = 0; step < 3; step++) {
      config = (await first.put(
        config,
        checkpoint({ messages: branch.slice(0, step + 1) }, { messages: step + 1 }),
        meta,
        { messages: step + 1 },
      )) as Config;
      forkPoint.push(config);
    }
    // The other process forks from the first checkpoint and prunes: the first branch, and
    // the sequence the first process is still extending, are gone.
    let other: Config = forkPoint[0]!;
    for (let step = 1; step < 4; step++) {
      const messages = [
        branch[0]!,
        ...[1, 2, 3].slice(0, step).map((index) => message(`b${index}`)),
      ];
      other = (await second.put(other, checkpoint({ messages }, { messages: 10 + step }), meta, {
        messages: 10 + step,
      })) as Config;
    }
    expect((await second.prune('stale', { keepLast: 1 })).checkpoints).toBe(5);
    const extended = [...branch, message('a3')];
    const resumed = await first.put(
      config,
      checkpoint({ messages: extended }, { messages: 4 }),
      meta,
      { messages: 4 },
    );
    expect((await first.getTuple(resumed))!.checkpoint.channel_values.messages).toEqual(extended);
    expect((await second.getTuple(other))!.checkpoint.channel_values.messages).toHaveLength(4);
  });

  it('keeps an older branch that is waiting on an interrupt, with its writes', async () => {
    const saver = PostgresCheckpointer.fromDatabase(db());
    const root = { configurable: { thread_id: 'branches', checkpoint_ns: '' } };
    const first = await saver.put(root, checkpoint({ n: 1 }, { n: 1 }), meta, { n: 1 });
    const waiting = await saver.put(first, checkpoint({ n: 2 }, { n: 2 }), meta, { n: 2 });
    await saver.putWrites(
      waiting,
      [[INTERRUPT, [{ id: 'i1', value: 'approve?' }]]],
      'task-approve',
    );
    let latest: Config = first as Config;
    for (let step = 0; step < 3; step++) {
      latest = (await saver.put(latest, checkpoint({ n: 10 + step }, { n: 10 + step }), meta, {
        n: 10 + step,
      })) as Config;
    }
    const result = await saver.prune('branches', { keepLast: 1 });
    // The shared parent and the two older main-line checkpoints go; both leaves stay.
    expect(result.checkpoints).toBe(3);
    const kept = await saver.getTuple(waiting);
    expect(kept!.checkpoint.channel_values).toEqual({ n: 2 });
    expect(kept!.pendingWrites).toEqual([
      ['task-approve', INTERRUPT, [{ id: 'i1', value: 'approve?' }]],
    ]);
    expect(await saver.getTuple(first)).toBeUndefined();
    expect((await saver.getTuple(root))!.checkpoint.channel_values).toEqual({ n: 12 });
    expect((await saver.verifyThread('branches')).valid).toBe(true);
  });

  it('keeps the ancestors a delta channel replays from, so its history is unchanged', async () => {
    const saver = PostgresCheckpointer.fromDatabase(db());
    const root = { configurable: { thread_id: 'delta', checkpoint_ns: '' } };
    const old = await saver.put(root, checkpoint({ other: 1 }, { other: 1 }), meta, { other: 1 });
    let config = await saver.put(
      old,
      checkpoint({ log: new DeltaSnapshot(['seed']) }, { log: 1, other: 1 }),
      meta,
      { log: 1 },
    );
    for (let step = 0; step < 4; step++) {
      await saver.putWrites(config, [['log', [`entry ${step}`]]], `task-${step}`, '~log');
      const counters = {
        counters_since_delta_snapshot: { log: [step + 1, step + 1] as [number, number] },
      };
      config = await saver.put(
        config,
        checkpoint({}, { log: 2 + step, other: 1 }),
        { ...meta, ...counters },
        { log: 2 + step },
      );
    }
    const before = await saver.getDeltaChannelHistory({ config, channels: ['log'] });
    const result = await saver.prune('delta', { keepLast: 1 });
    expect(result.checkpoints).toBe(1); // only the checkpoint before the seed could go
    expect(await saver.getDeltaChannelHistory({ config, channels: ['log'] })).toEqual(before);
    expect(before.log!.writes.map((write) => write[2])).toEqual([
      ['entry 0'],
      ['entry 1'],
      ['entry 2'],
      ['entry 3'],
    ]);
    expect(await saver.getTuple(old)).toBeUndefined();
  });
});
