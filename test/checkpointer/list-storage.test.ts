import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import {
  type Checkpoint,
  emptyCheckpoint,
  JsonPlusSerializer,
  uuid6,
} from '@langchain/langgraph-checkpoint';
import { expect, it } from 'vitest';
import { PostgresCheckpointer } from '../../src/checkpointer/index.js';
import type { Database } from '../../src/db/index.js';
import { describeEachDatabase } from '../support/databases.js';

type Config = { configurable: Record<string, unknown> };

function message(index: number) {
  return {
    role: index % 2 ? 'assistant' : 'user',
    content: `${index} ${'lorem '.repeat(80)}`,
    id: `m${index}`,
  };
}

function checkpointWith(messages: unknown[], step: number): Checkpoint {
  return {
    ...emptyCheckpoint(),
    id: uuid6(-1),
    channel_values: { messages, step },
    channel_versions: { messages: step + 1, step: step + 1 },
    versions_seen: {},
  };
}

async function putStep(
  saver: PostgresCheckpointer,
  parent: Config,
  messages: unknown[],
  step: number,
): Promise<Config> {
  return (await saver.put(
    parent,
    checkpointWith(messages, step),
    { source: 'loop', step, parents: {} },
    {
      messages: step + 1,
      step: step + 1,
    },
  )) as Config;
}

async function count(db: Database, table: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
  return rows[0]!.n;
}

async function sequenceLengths(db: Database): Promise<number[]> {
  const { rows } = await db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM veridex_checkpoint_items GROUP BY sequence_id ORDER BY 1',
  );
  return rows.map((row) => row.n);
}

describeEachDatabase('PostgresCheckpointer list storage', ({ db, open }) => {
  it('round-trips LangChain messages with tool calls exactly as LangGraph serde does', async () => {
    const saver = PostgresCheckpointer.fromDatabase(db());
    const serde = new JsonPlusSerializer();
    const messages = [
      new SystemMessage('You pay invoices. '.repeat(10)),
      new HumanMessage({ content: 'Pay invoice 42 please — €12.50 🧾', id: 'h1' }),
      new AIMessage({
        content: '',
        id: 'a1',
        tool_calls: [
          {
            id: 'call_1',
            name: 'pay',
            args: { invoice: 42, amount: { minor: '1250', currency: 'EUR' } },
          },
        ],
      }),
      new ToolMessage({
        content: '{"status":"paid","quote":"\\"ok\\", done"}',
        tool_call_id: 'call_1',
      }),
      new AIMessage({ content: [{ type: 'text', text: 'Paid.\nAnything else?' }], id: 'a2' }),
    ];
    const config = await putStep(saver, { configurable: { thread_id: 't' } }, messages, 0);
    const tuple = await saver.getTuple(config);
    const [type, bytes] = await serde.dumpsTyped(messages);
    const expected = await serde.loadsTyped(type, bytes);
    const stored = tuple!.checkpoint.channel_values.messages as unknown[];
    expect(stored).toEqual(expected);
    expect(stored[2]).toBeInstanceOf(AIMessage);
    expect((stored[2] as AIMessage).tool_calls?.[0]?.args).toEqual({
      invoice: 42,
      amount: { minor: '1250', currency: 'EUR' },
    });
    expect(stored[3]).toBeInstanceOf(ToolMessage);
    // Stored element by element, not as one blob.
    expect(await count(db(), 'veridex_checkpoint_elements')).toBe(messages.length);
  });

  it('stores a growing messages channel once per message and reads every version back', async () => {
    const saver = PostgresCheckpointer.fromDatabase(db());
    const messages: unknown[] = [];
    const configs: Config[] = [];
    let config: Config = { configurable: { thread_id: 'long', checkpoint_ns: '' } };
    for (let step = 0; step < 30; step++) {
      messages.push(message(step));
      config = await putStep(saver, config, [...messages], step);
      configs.push(config);
    }
    // Linear: one element and one sequence item per message, not 30 × 31 / 2 copies.
    expect(await count(db(), 'veridex_checkpoint_elements')).toBe(30);
    expect(await count(db(), 'veridex_checkpoint_items')).toBe(30);
    const { rows } = await db().query<{ bytes: number }>(
      'SELECT sum(length(body))::int AS bytes FROM veridex_checkpoint_elements',
    );
    expect(rows[0]!.bytes).toBe(
      messages.reduce<number>((sum, each) => sum + JSON.stringify(each).length, 0),
    );
    for (const step of [0, 9, 29]) {
      const tuple = await saver.getTuple(configs[step]!);
      expect(tuple!.checkpoint.channel_values.messages).toEqual(messages.slice(0, step + 1));
      expect(tuple!.checkpoint.channel_values.step).toBe(step);
    }
  });

  it('keeps a stale list cache correct when another process extended the thread', async () => {
    const first = PostgresCheckpointer.fromDatabase(db());
    const second = PostgresCheckpointer.fromDatabase(await open());
    const messages = [0, 1, 2, 3, 4].map(message);
    let config: Config = { configurable: { thread_id: 'shared', checkpoint_ns: '' } };
    for (let step = 0; step < 5; step++)
      config = await putStep(first, config, messages.slice(0, step + 1), step);
    messages.push(message(5));
    config = await putStep(second, config, [...messages], 5);
    messages.push(message(6));
    config = await putStep(first, config, [...messages], 6);
    const latest = await second.getTuple({
      configurable: { thread_id: 'shared', checkpoint_ns: '' },
    });
    expect(latest!.checkpoint.channel_values.messages).toEqual(messages);
    expect(latest!.config.configurable!.checkpoint_id).toBe(config.configurable.checkpoint_id);
    // The first checkpointer appended its two new messages to the sequence it had cached
    // (5 + 2 items); the second, knowing nothing, wrote a fresh sequence of 6.
    expect(await sequenceLengths(db())).toEqual([6, 7]);
  });

  it('retries with a fresh sequence when two writes extend the same list concurrently', async () => {
    const saver = PostgresCheckpointer.fromDatabase(db());
    const base = [0, 1, 2].map(message);
    let config: Config = { configurable: { thread_id: 'race', checkpoint_ns: '' } };
    for (let step = 0; step < 3; step++)
      config = await putStep(saver, config, base.slice(0, step + 1), step);
    const left = [...base, { role: 'user', content: 'left branch '.repeat(30), id: 'left' }];
    const right = [...base, { role: 'user', content: 'right branch '.repeat(30), id: 'right' }];
    // Both match the cached sequence and append at the same position: one hits the key.
    const [leftConfig, rightConfig] = await Promise.all([
      putStep(saver, config, left, 3),
      putStep(saver, config, right, 3),
    ]);
    expect((await saver.getTuple(leftConfig))!.checkpoint.channel_values.messages).toEqual(left);
    expect((await saver.getTuple(rightConfig))!.checkpoint.channel_values.messages).toEqual(right);
    // The loser of the race rewrote its list as a fresh sequence of 4.
    expect(await sequenceLengths(db())).toEqual([4, 4]);
  });

  it('keeps each branch its own values after a fork from an older checkpoint', async () => {
    // The official PostgresSaver returns the other branch's list here: it keys values by
    // (channel, version), and a fork reuses version numbers.
    const saver = PostgresCheckpointer.fromDatabase(db());
    const State = Annotation.Root({
      items: Annotation<string[]>({
        reducer: (left, right) => left.concat(right),
        default: () => [],
      }),
    });
    const graph = new StateGraph(State)
      .addNode('a', () => ({ items: ['a'] }))
      .addNode('b', () => ({ items: ['b'] }))
      .addEdge(START, 'a')
      .addEdge('a', 'b')
      .addEdge('b', END)
      .compile({ checkpointer: saver });
    const config = { configurable: { thread_id: 'fork' } };
    await graph.invoke({ items: ['start'] }, config);
    const history = [];
    for await (const snapshot of graph.getStateHistory(config)) history.push(snapshot);
    const afterA = history.find((snapshot) => snapshot.next[0] === 'b')!;
    const forked = await graph.updateState(afterA.config, { items: ['X'] });
    expect((await graph.getState(forked)).values.items).toEqual(['start', 'a', 'X']);
    expect((await graph.invoke(null, forked)).items).toEqual(['start', 'a', 'X', 'b']);
    expect((await graph.getState(config)).values.items).toEqual(['start', 'a', 'X', 'b']);
    expect((await graph.getState(afterA.config)).values.items).toEqual(['start', 'a']);
  });

  it('stores everything whole when list storage is off, with the same values', async () => {
    const saver = PostgresCheckpointer.fromDatabase(db(), { listStorage: false });
    const messages = [0, 1, 2].map(message);
    const config = await putStep(saver, { configurable: { thread_id: 'whole' } }, messages, 0);
    expect((await saver.getTuple(config))!.checkpoint.channel_values.messages).toEqual(messages);
    expect(await count(db(), 'veridex_checkpoint_elements')).toBe(0);
    expect(await count(db(), 'veridex_checkpoint_blobs')).toBe(1);
  });
});
