import { randomUUID } from 'node:crypto';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import {
  type BaseCheckpointSaver,
  emptyCheckpoint,
  MemorySaver,
  uuid6,
} from '@langchain/langgraph-checkpoint';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import pg from 'pg';
import { PostgresCheckpointer } from '../src/checkpointer/index.js';
import { createDatabase, type Database } from '../src/db/index.js';
import { median, ms, percentile } from './stats.js';

// `npm run bench -- checkpointer`: ours vs the official PostgresSaver vs MemorySaver vs a raw
// single-INSERT floor vs the protocol floor (the three statements LangGraph's saver protocol
// needs per step, bare), on the same PostgreSQL database in the same run (issues 3 and 20).

const DEFAULT_URL = 'postgres://postgres@127.0.0.1:5432/test';
// BENCH_CHECKPOINTER_THREADS=40 for a quick look while profiling (default 200).
const THREADS = Number(process.env.BENCH_CHECKPOINTER_THREADS ?? 200);
const STEPS = 25;
const POOL = 8;
const GRAPH_INVOCATIONS = 100;
const LONG_THREAD_INVOCATIONS = 20;

/** A saver, or one of the bare-SQL floors (`floor`: one INSERT; `protocol`: put, putWrites, getTuple). */
type Saver = BaseCheckpointSaver | 'floor' | 'protocol';

/** Per-operation samples of one contender in one W1 phase. */
interface W1Samples {
  elapsed: number;
  /** Client CPU (user + system) spent in this process during the phase, µs. */
  cpu: number;
  steps: number;
  put: number[];
  putWrites: number[];
  getTuple: number[];
}

interface Contender {
  name: string;
  saver: Saver;
  /** The pool of a bare-SQL contender, when not the floor's. */
  pool?: pg.Pool;
  tables?: { schema: string; names: string[] };
  threads: string[];
  c1: W1Samples;
  c8: W1Samples;
  lists: number[];
  graph: number[];
  long: number[];
}

function samples(): W1Samples {
  return { elapsed: 0, cpu: 0, steps: 0, put: [], putWrites: [], getTuple: [] };
}

/** Deterministic pseudo-random text: ~500-byte messages that compress like real prose would not. */
export function messageText(thread: number, index: number): string {
  let seed = (thread * 7919 + index * 104729) >>> 0;
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789     ';
  let text = '';
  for (let position = 0; position < 420; position++) {
    seed = (seed * 1664525 + 1013904223) >>> 0;
    text += alphabet[seed % alphabet.length];
  }
  return text;
}

export function w1Message(thread: number, index: number) {
  return {
    role: index % 2 === 0 ? 'user' : 'assistant',
    content: messageText(thread, index),
    id: `msg-${thread}-${index}`,
  };
}

/** One W1 thread: 25 steps of put (messages + 1), putWrites of 2 writes, getTuple latest. */
async function w1Thread(
  contender: Contender,
  floor: pg.Pool,
  thread: number,
  into: W1Samples,
): Promise<void> {
  const { saver } = contender;
  const threadId = randomUUID();
  let config = { configurable: { thread_id: threadId, checkpoint_ns: '' } } as {
    configurable: Record<string, unknown>;
  };
  const messages: unknown[] = [];
  for (let step = 0; step < STEPS; step++) {
    messages.push(w1Message(thread, step));
    const checkpoint = {
      ...emptyCheckpoint(),
      id: uuid6(-1),
      channel_values: { messages: [...messages], step },
      channel_versions: { messages: step + 1, step: step + 1 },
      versions_seen: { agent: { messages: step, step } },
    };
    const metadata = { source: 'loop' as const, step, parents: {} };
    const writes: Array<[string, unknown]> = [
      ['messages', [w1Message(thread, step + 1)]],
      ['step', step + 1],
    ];
    if (saver === 'floor') {
      // The floor: one INSERT per step of the step's new data as one JSONB document.
      const start = performance.now();
      await floor.query(
        'INSERT INTO bench_floor (thread_id, checkpoint_id, payload) VALUES ($1, $2, $3)',
        [
          threadId,
          checkpoint.id,
          JSON.stringify({
            checkpoint: { ...checkpoint, channel_values: undefined },
            metadata,
            message: messages.at(-1),
            writes,
          }),
        ],
      );
      into.put.push(performance.now() - start);
      continue;
    }
    if (saver === 'protocol') {
      // The protocol floor: the same data, written as the saver protocol requires — the
      // checkpoint committed (put), the task's two writes committed (putWrites), the
      // checkpoint read back by its key (getTuple) — as bare prepared statements.
      const pool = contender.pool ?? floor;
      let start = performance.now();
      await pool.query({
        name: 'protocol_put',
        text: 'INSERT INTO protocol_checkpoints (thread_id, checkpoint_id, payload) VALUES ($1, $2, $3)',
        values: [
          threadId,
          checkpoint.id,
          JSON.stringify({
            checkpoint: { ...checkpoint, channel_values: undefined },
            metadata,
            message: messages.at(-1),
          }),
        ],
      });
      into.put.push(performance.now() - start);
      start = performance.now();
      await pool.query({
        name: 'protocol_put_writes',
        text: `INSERT INTO protocol_writes (thread_id, checkpoint_id, task_id, idx, channel, value)
               VALUES ($1, $2, $3, 0, $4, $5), ($1, $2, $3, 1, $6, $7)`,
        values: [
          threadId,
          checkpoint.id,
          randomUUID(),
          writes[0]![0],
          JSON.stringify(writes[0]![1]),
          writes[1]![0],
          JSON.stringify(writes[1]![1]),
        ],
      });
      into.putWrites.push(performance.now() - start);
      start = performance.now();
      await pool.query({
        name: 'protocol_get',
        text: 'SELECT payload FROM protocol_checkpoints WHERE thread_id = $1 AND checkpoint_id = $2',
        values: [threadId, checkpoint.id],
      });
      into.getTuple.push(performance.now() - start);
      continue;
    }
    let start = performance.now();
    config = (await saver.put(config, checkpoint, metadata, {
      messages: step + 1,
      step: step + 1,
    })) as typeof config;
    into.put.push(performance.now() - start);
    start = performance.now();
    await saver.putWrites(config, writes, randomUUID(), '~__pregel_pull, agent');
    into.putWrites.push(performance.now() - start);
    start = performance.now();
    await saver.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: '' } });
    into.getTuple.push(performance.now() - start);
  }
  into.steps += STEPS;
  contender.threads.push(threadId);
}

/** Runs `count` W1 threads on one contender with `concurrency` workers; adds to `into`. */
async function w1Round(
  contender: Contender,
  floor: pg.Pool,
  first: number,
  count: number,
  concurrency: number,
  into: W1Samples,
): Promise<void> {
  let next = first;
  const start = performance.now();
  // Client CPU tells where a step's time goes: what this process computes (serde, hashing,
  // the driver) versus what it waits for (round trips, the server, commits).
  const cpuStart = process.cpuUsage();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < first + count) await w1Thread(contender, floor, next++, into);
    }),
  );
  const cpu = process.cpuUsage(cpuStart);
  into.cpu += cpu.user + cpu.system;
  into.elapsed += performance.now() - start;
}

async function listThread(saver: BaseCheckpointSaver, threadId: string): Promise<number> {
  const start = performance.now();
  let count = 0;
  for await (const _ of saver.list({ configurable: { thread_id: threadId, checkpoint_ns: '' } })) {
    count++;
  }
  if (count !== STEPS) throw new Error(`list returned ${count} checkpoints, expected ${STEPS}`);
  return performance.now() - start;
}

async function tableBytes(
  pool: pg.Pool,
  schema: string,
  names: readonly string[],
): Promise<number[]> {
  const { rows } = await pool.query<{ bytes: string }>(
    `SELECT coalesce(pg_total_relation_size(format('%I.%I', $1::text, name)), 0)::bigint AS bytes
     FROM unnest($2::text[]) WITH ORDINALITY AS t(name, position) ORDER BY position`,
    [schema, names],
  );
  return rows.map((row) => Number(row.bytes));
}

/** Ten nodes in a line, each appending one ~450-byte AIMessage. */
function linearGraph(saver: BaseCheckpointSaver) {
  const nodes = Array.from(
    { length: 10 },
    (_, index) =>
      [
        `node${index}`,
        (state: typeof MessagesAnnotation.State) => ({
          messages: [
            new AIMessage({
              content: `node${index}: ${messageText(state.messages.length, index)}`,
              id: randomUUID(),
            }),
          ],
        }),
      ] as [string, (state: typeof MessagesAnnotation.State) => { messages: AIMessage[] }],
  );
  return new StateGraph(MessagesAnnotation)
    .addSequence(nodes)
    .addEdge(START, 'node0')
    .addEdge('node9', END)
    .compile({ checkpointer: saver });
}

function opLine(name: string, phase: W1Samples): string {
  const ops = (label: string, values: number[]) =>
    values.length > 0
      ? ` ${label} p50 ${ms(median(values))} p99 ${ms(percentile(values, 99))}`
      : '';
  const rate = phase.steps / (phase.elapsed / 1000);
  const cpu = phase.steps > 0 ? ` (client CPU ${ms(phase.cpu / 1000 / phase.steps)} ms/step)` : '';
  return `${name}: ${rate.toFixed(0)} steps/s;${ops('put', phase.put)}${ops('putWrites', phase.putWrites)}${ops('getTuple', phase.getTuple)} ms${cpu}`;
}

function rate(phase: W1Samples): number {
  return phase.steps / (phase.elapsed / 1000);
}

const mean = (values: readonly number[]) =>
  values.reduce((sum, value) => sum + value, 0) / values.length;

/**
 * `npm run bench -- checkpointer`. The PostgreSQL contenders take turns (thread by thread at
 * c=1, in rounds of 40 threads at c=8, blocks of 20 threads for list, invocation by
 * invocation for the graphs), so that load from anything else on the machine falls on all
 * of them alike.
 */
export async function run(): Promise<void> {
  const url = process.env.DATABASE_URL || DEFAULT_URL;
  const admin = new pg.Pool({ connectionString: url, max: 2 });
  try {
    await admin.query('SELECT 1');
  } catch (error) {
    await admin.end();
    throw new Error(
      `The checkpointer benchmark needs PostgreSQL: ${url.replace(/\/\/[^@]*@/, '//…@')} is unreachable (${(error as Error).message}). Set DATABASE_URL.`,
    );
  }
  const schemas = {
    ours: 'bench_ckpt_ours',
    oursAsync: 'bench_ckpt_ours_async',
    official: 'bench_ckpt_official',
    floor: 'bench_ckpt_floor',
  };
  for (const schema of Object.values(schemas)) {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  }
  const ourDb: Database = await createDatabase({ url, schema: schemas.ours, maxConnections: POOL });
  const ours = PostgresCheckpointer.fromDatabase(ourDb);
  await ours.setup();
  // The same checkpointer with asynchronous commit (opt-in), in its own schema.
  const ourAsyncDb: Database = await createDatabase({
    url,
    schema: schemas.oursAsync,
    maxConnections: POOL,
  });
  const oursAsync = PostgresCheckpointer.fromDatabase(ourAsyncDb, { synchronousCommit: false });
  await oursAsync.setup();
  const officialPool = new pg.Pool({ connectionString: url, max: POOL });
  const official = new PostgresSaver(officialPool, undefined, { schema: schemas.official });
  await official.setup();
  const floorPool = new pg.Pool({
    connectionString: url,
    max: POOL,
    options: `-c search_path=${schemas.floor}`,
  });
  await admin.query(`CREATE SCHEMA ${schemas.floor}`);
  await admin.query(
    `CREATE TABLE ${schemas.floor}.bench_floor (thread_id text, checkpoint_id text, payload jsonb, PRIMARY KEY (thread_id, checkpoint_id))`,
  );
  await admin.query(
    `CREATE TABLE ${schemas.floor}.protocol_checkpoints (thread_id text, checkpoint_id text, payload jsonb, PRIMARY KEY (thread_id, checkpoint_id))`,
  );
  await admin.query(
    `CREATE TABLE ${schemas.floor}.protocol_writes (thread_id text, checkpoint_id text, task_id text, idx integer, channel text, value jsonb, PRIMARY KEY (thread_id, checkpoint_id, task_id, idx))`,
  );
  // The same protocol with asynchronous commit, to set beside ours with synchronousCommit: false.
  const protocolAsyncPool = new pg.Pool({
    connectionString: url,
    max: POOL,
    options: `-c search_path=${schemas.floor} -c synchronous_commit=off`,
  });
  const contender = (name: string, saver: Saver, tables?: Contender['tables']): Contender => ({
    name,
    saver,
    ...(tables ? { tables } : {}),
    threads: [],
    c1: samples(),
    c8: samples(),
    lists: [],
    graph: [],
    long: [],
  });
  const ourTables = [
    'veridex_checkpoint_threads',
    'veridex_checkpoints',
    'veridex_checkpoint_blobs',
    'veridex_checkpoint_items',
    'veridex_checkpoint_elements',
    'veridex_checkpoint_writes',
    'veridex_checkpoint_pruned',
  ];
  const contenders: Contender[] = [
    contender('ours', ours, { schema: schemas.ours, names: ourTables }),
    contender('ours-async', oursAsync, { schema: schemas.oursAsync, names: ourTables }),
    contender('official', official, {
      schema: schemas.official,
      names: ['checkpoints', 'checkpoint_blobs', 'checkpoint_writes'],
    }),
    contender('memory', new MemorySaver()),
    contender('floor', 'floor', { schema: schemas.floor, names: ['bench_floor'] }),
    contender('protocol', 'protocol', {
      schema: schemas.floor,
      names: ['protocol_checkpoints', 'protocol_writes'],
    }),
    { ...contender('protocol-async', 'protocol'), pool: protocolAsyncPool },
  ];
  const savers = contenders.filter(
    (each): each is Contender & { saver: BaseCheckpointSaver } =>
      each.saver !== 'floor' && each.saver !== 'protocol',
  );
  const bytes: Record<string, number> = {};
  try {
    // MemorySaver keeps every checkpoint on the JavaScript heap: run it after the others so
    // its garbage-collection pauses do not land on them.
    const [memory] = contenders.filter((each) => each.name === 'memory');
    const shared = contenders.filter((each) => each !== memory);
    for (let thread = 0; thread < THREADS; thread++) {
      for (const each of shared) await w1Round(each, floorPool, thread, 1, 1, each.c1);
    }
    await w1Round(memory!, floorPool, 0, THREADS, 1, memory!.c1);
    for (const each of contenders) console.log(`W1 c=1 ${opLine(each.name, each.c1)}`);
    for (const each of contenders) {
      if (!each.tables) continue;
      const sizes = await tableBytes(admin, each.tables.schema, each.tables.names);
      bytes[each.name] = sizes.reduce((sum, size) => sum + size, 0);
      const parts = each.tables.names.map(
        (name, index) =>
          `${name.replace('veridex_checkpoint', '…')} ${(sizes[index]! / 1048576).toFixed(2)}`,
      );
      console.log(
        `  ${each.name}: ${(bytes[each.name]! / 1048576).toFixed(1)} MiB after ${THREADS * STEPS} checkpoints (${parts.join(', ')})`,
      );
    }
    // Vacuum both savers' tables (after measuring their size) so that autovacuum, which the
    // bulk load just triggered, does not run during the next measurements.
    const settle = async () => {
      for (const each of contenders) {
        for (const name of each.tables?.names ?? []) {
          await admin.query(`VACUUM ANALYZE ${each.tables!.schema}.${name}`);
        }
      }
    };
    await settle();
    // In blocks, so that one saver's garbage (the official one parses nested arrays) is
    // mostly collected before the next saver's block starts.
    for (let block = 0; block < THREADS; block += 20) {
      for (const each of savers) {
        for (const threadId of each.threads.slice(block, block + 20)) {
          each.lists.push(await listThread(each.saver, threadId));
        }
      }
    }
    for (const each of savers) {
      console.log(
        `  ${each.name}: list(${STEPS}) p50 ${ms(median(each.lists))} p99 ${ms(percentile(each.lists, 99))} ms`,
      );
    }
    for (let round = 0; round < THREADS / 40; round++) {
      for (const each of shared) {
        await w1Round(each, floorPool, THREADS + round * 40, 40, POOL, each.c8);
      }
    }
    await w1Round(memory!, floorPool, THREADS, THREADS, POOL, memory!.c8);
    for (const each of contenders) console.log(`W1 c=${POOL} ${opLine(each.name, each.c8)}`);
    await settle();
    // A fresh MemorySaver: the W1 one holds 10,000 checkpoints whose garbage collection
    // would slow every contender's graph runs.
    memory!.saver = new MemorySaver();
    const graphs = savers.map((each) => ({
      each,
      graph: linearGraph(each === memory ? (memory.saver as BaseCheckpointSaver) : each.saver),
    }));
    for (let invocation = 0; invocation < GRAPH_INVOCATIONS; invocation++) {
      for (const { each, graph } of graphs) {
        const start = performance.now();
        await graph.invoke(
          { messages: [new HumanMessage('hello')] },
          { configurable: { thread_id: randomUUID() } },
        );
        each.graph.push(performance.now() - start);
      }
    }
    const longThreads = graphs.map(() => ({ configurable: { thread_id: randomUUID() } }));
    for (let invocation = 0; invocation < LONG_THREAD_INVOCATIONS; invocation++) {
      for (const [index, { each, graph }] of graphs.entries()) {
        const start = performance.now();
        await graph.invoke(
          { messages: [new HumanMessage(messageText(invocation, 1))] },
          longThreads[index]!,
        );
        each.long.push(performance.now() - start);
      }
    }
    for (const each of savers) {
      // First and last three invocations, averaged; the thread ends with 220 messages.
      const first = mean(each.long.slice(0, 3));
      const last = mean(each.long.slice(-3));
      console.log(
        `graph ${each.name}: 10-node invoke p50 ${ms(median(each.graph))} ms; long thread first ${ms(first)} ms, last ${ms(last)} ms (x${(last / first).toFixed(2)})`,
      );
    }
    const [ourSide, asyncSide, officialSide, memorySide] = savers;
    const protocolSide = contenders.find((each) => each.name === 'protocol')!;
    const protocolAsyncSide = contenders.find((each) => each.name === 'protocol-async')!;
    const floorRatios = (side: Contender, floor: Contender, suffix: string) =>
      [
        `protocol_floor_ratio${suffix}=${(rate(side.c1) / rate(floor.c1)).toFixed(2)}`,
        `protocol_floor_ratio_c8${suffix}=${(rate(side.c8) / rate(floor.c8)).toFixed(2)}`,
      ].join(' ');
    const longRatio = (side: Contender) => mean(side.long.slice(-3)) / mean(side.long.slice(0, 3));
    const ratios = (side: Contender, suffix: string) =>
      [
        `c1_ratio${suffix}=${(rate(side.c1) / rate(officialSide!.c1)).toFixed(2)}`,
        `c8_ratio${suffix}=${(rate(side.c8) / rate(officialSide!.c8)).toFixed(2)}`,
        `graph_vs_memory${suffix}=${(median(side.graph) / median(memorySide!.graph)).toFixed(2)}`,
        `long_thread_ratio${suffix}=${longRatio(side).toFixed(2)}`,
      ].join(' ');
    console.log(
      `RESULT checkpointer ${ratios(ourSide!, '')} list_p50_ms=${ms(median(ourSide!.lists))} storage_ratio=${(bytes.ours! / bytes.official!).toFixed(3)} ${floorRatios(ourSide!, protocolSide, '')} ${ratios(asyncSide!, '_async')} ${floorRatios(asyncSide!, protocolAsyncSide, '_async')}`,
    );
  } finally {
    await ours.close();
    await ourDb.close();
    await oursAsync.close();
    await ourAsyncDb.close();
    await officialPool.end();
    await floorPool.end();
    await protocolAsyncPool.end();
    for (const schema of Object.values(schemas)) {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    }
    await admin.end();
  }
}
