import { randomUUID } from 'node:crypto';
import { emptyCheckpoint, uuid6 } from '@langchain/langgraph-checkpoint';
import pg from 'pg';
import { checkpointContentDigest, valueDigest } from '../src/checkpointer/checkpoint-hash.js';
import { PostgresCheckpointer } from '../src/checkpointer/index.js';
import { planPut } from '../src/checkpointer/put-plan.js';
import { prefixDigest, SequenceCache } from '../src/checkpointer/sequence-cache.js';
import { planWrites } from '../src/checkpointer/writes-plan.js';
import { createDatabase } from '../src/db/index.js';
import { w1Message } from './checkpointer.bench.js';
import { median } from './stats.js';

// `npm run bench -- checkpointer-cpu`: where the checkpointer's client time goes, next to the
// protocol floor (the same three statements bare). Per call: CPU time of this process (user +
// system: serde, hashing, planning, the pg driver) and wall time, at c=1 on one pool, threads
// interleaved; then the client-side pieces of one mid-thread W1 step measured alone. CPU time
// is what other load on the machine disturbs least.

const DEFAULT_URL = 'postgres://postgres@127.0.0.1:5432/test';
const THREADS = Number(process.env.BENCH_CHECKPOINTER_THREADS ?? 60);
const STEPS = 25;

interface Sample {
  cpu: number[];
  wall: number[];
}
const sample = (): Sample => ({ cpu: [], wall: [] });

async function measure<T>(into: Sample, run: () => Promise<T>): Promise<T> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  const result = await run();
  into.wall.push((performance.now() - start) * 1000);
  const used = process.cpuUsage(cpu);
  into.cpu.push(used.user + used.system);
  return result;
}

function step(thread: number, index: number, messages: unknown[]) {
  messages.push(w1Message(thread, index));
  return {
    checkpoint: {
      ...emptyCheckpoint(),
      id: uuid6(-1),
      channel_values: { messages: [...messages], step: index },
      channel_versions: { messages: index + 1, step: index + 1 },
      versions_seen: { agent: { messages: index, step: index } },
    },
    metadata: { source: 'loop' as const, step: index, parents: {} },
    writes: [
      ['messages', [w1Message(thread, index + 1)]],
      ['step', index + 1],
    ] as Array<[string, unknown]>,
    versions: { messages: index + 1, step: index + 1 },
  };
}

/** Mean CPU µs per iteration of `fn` (after a warm-up). */
async function cpuPer(iterations: number, fn: () => unknown): Promise<number> {
  for (let index = 0; index < Math.min(200, iterations); index++) await fn();
  const cpu = process.cpuUsage();
  for (let index = 0; index < iterations; index++) await fn();
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / iterations;
}

export async function run(): Promise<void> {
  const url = process.env.DATABASE_URL || DEFAULT_URL;
  const schema = 'bench_ckpt_cpu';
  const floorSchema = 'bench_ckpt_cpu_floor';
  const admin = new pg.Pool({ connectionString: url, max: 1 });
  for (const name of [schema, floorSchema])
    await admin.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
  await admin.query(`CREATE SCHEMA ${floorSchema}`);
  await admin.query(
    `CREATE TABLE ${floorSchema}.protocol_checkpoints (thread_id text, checkpoint_id text, payload jsonb, PRIMARY KEY (thread_id, checkpoint_id))`,
  );
  await admin.query(
    `CREATE TABLE ${floorSchema}.protocol_writes (thread_id text, checkpoint_id text, task_id text, idx integer, channel text, value jsonb, PRIMARY KEY (thread_id, checkpoint_id, task_id, idx))`,
  );
  const db = await createDatabase({ url, schema, maxConnections: 8 });
  const ours = PostgresCheckpointer.fromDatabase(db);
  await ours.setup();
  const floor = new pg.Pool({
    connectionString: url,
    max: 8,
    options: `-c search_path=${floorSchema}`,
  });
  const our = { put: sample(), putWrites: sample(), getTuple: sample() };
  const bare = { put: sample(), putWrites: sample(), getTuple: sample() };
  try {
    for (let thread = 0; thread < THREADS; thread++) {
      // Ours.
      const threadId = randomUUID();
      let config = { configurable: { thread_id: threadId, checkpoint_ns: '' } } as {
        configurable: Record<string, unknown>;
      };
      let messages: unknown[] = [];
      for (let index = 0; index < STEPS; index++) {
        const s = step(thread, index, messages);
        config = (await measure(our.put, () =>
          ours.put(config, s.checkpoint, s.metadata, s.versions),
        )) as typeof config;
        await measure(our.putWrites, () => ours.putWrites(config, s.writes, randomUUID()));
        await measure(our.getTuple, () =>
          ours.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: '' } }),
        );
      }
      // The protocol floor.
      const floorThread = randomUUID();
      messages = [];
      for (let index = 0; index < STEPS; index++) {
        const s = step(thread, index, messages);
        await measure(bare.put, () =>
          floor.query({
            name: 'protocol_put',
            text: 'INSERT INTO protocol_checkpoints (thread_id, checkpoint_id, payload) VALUES ($1, $2, $3)',
            values: [
              floorThread,
              s.checkpoint.id,
              JSON.stringify({
                checkpoint: { ...s.checkpoint, channel_values: undefined },
                metadata: s.metadata,
                message: messages.at(-1),
              }),
            ],
          }),
        );
        await measure(bare.putWrites, () =>
          floor.query({
            name: 'protocol_put_writes',
            text: `INSERT INTO protocol_writes (thread_id, checkpoint_id, task_id, idx, channel, value)
                   VALUES ($1, $2, $3, 0, $4, $5), ($1, $2, $3, 1, $6, $7)`,
            values: [
              floorThread,
              s.checkpoint.id,
              randomUUID(),
              s.writes[0]![0],
              JSON.stringify(s.writes[0]![1]),
              s.writes[1]![0],
              JSON.stringify(s.writes[1]![1]),
            ],
          }),
        );
        await measure(bare.getTuple, () =>
          floor.query({
            name: 'protocol_get',
            text: 'SELECT payload FROM protocol_checkpoints WHERE thread_id = $1 AND checkpoint_id = $2',
            values: [floorThread, s.checkpoint.id],
          }),
        );
      }
    }
    const line = (label: string, ourSample: Sample, bareSample: Sample) =>
      `${label.padEnd(9)} CPU ${median(ourSample.cpu).toFixed(0).padStart(4)} µs vs ${median(bareSample.cpu).toFixed(0).padStart(4)} µs (+${(median(ourSample.cpu) - median(bareSample.cpu)).toFixed(0)}); wall ${median(ourSample.wall).toFixed(0)} vs ${median(bareSample.wall).toFixed(0)} µs`;
    console.log(`per call, ours vs protocol floor, p50 of ${THREADS * STEPS} calls at c=1:`);
    console.log(`  ${line('put', our.put, bare.put)}`);
    console.log(`  ${line('putWrites', our.putWrites, bare.putWrites)}`);
    console.log(`  ${line('getTuple', our.getTuple, bare.getTuple)}`);

    // The client-side pieces of step 12 (13 messages), alone.
    const serde = ours.serde;
    const messages: unknown[] = [];
    let previous = step(0, 0, messages);
    for (let index = 1; index < 12; index++) previous = step(0, index, messages);
    const mid = step(0, 12, messages);
    const [type, bytes] = await serde.dumpsTyped(mid.checkpoint.channel_values.messages);
    const sequences = new SequenceCache(10);
    const context = { serde, listStorage: { minBytes: 256, minElementBytes: 48 }, sequences };
    const input = (s: typeof mid, parent?: string) => ({
      threadId: 't',
      checkpointNs: '',
      parentCheckpointId: parent,
      checkpoint: s.checkpoint,
      metadata: s.metadata,
      newVersions: s.versions,
    });
    const earlier = await planPut(input(previous), context);
    for (const [key, known] of earlier.remember) sequences.remember(key, known);
    const stored = await ours.getTuple({ configurable: { thread_id: 'none', checkpoint_ns: '' } });
    void stored;
    const pieces: Array<[string, number]> = [
      [
        'serde.dumpsTyped(messages)',
        await cpuPer(2000, () => serde.dumpsTyped(mid.checkpoint.channel_values.messages)),
      ],
      ['serde.loadsTyped(messages)', await cpuPer(2000, () => serde.loadsTyped(type, bytes))],
      ['valueDigest (SHA-256 of the list)', await cpuPer(2000, () => valueDigest(type, bytes))],
      [
        'prefixDigest (SHA-256 of the prefix)',
        await cpuPer(2000, () => prefixDigest(bytes, bytes.length - 1)),
      ],
      [
        'checkpointContentDigest (RFC 8785 + SHA-256)',
        await cpuPer(2000, () =>
          checkpointContentDigest({
            threadId: 't',
            checkpointNs: '',
            checkpointId: mid.checkpoint.id,
            parentCheckpointId: previous.checkpoint.id,
            checkpoint: { ...mid.checkpoint, channel_values: undefined, id: undefined },
            metadata: mid.metadata,
            values: [
              ['messages', 'a'.repeat(64)],
              ['step', 'b'.repeat(64)],
            ],
          }),
        ),
      ],
      [
        'planPut (all of the above for a put)',
        await cpuPer(2000, () => planPut(input(mid, previous.checkpoint.id), context)),
      ],
      [
        'planWrites',
        await cpuPer(2000, () =>
          planWrites(
            {
              threadId: 't',
              checkpointNs: '',
              checkpointId: mid.checkpoint.id,
              taskId: 'task',
              taskPath: '',
              writes: mid.writes,
            },
            context,
          ),
        ),
      ],
      [
        'protocol floor: JSON.stringify of its put payload',
        await cpuPer(2000, () =>
          JSON.stringify({
            checkpoint: { ...mid.checkpoint, channel_values: undefined },
            metadata: mid.metadata,
            message: messages.at(-1),
          }),
        ),
      ],
    ];
    console.log(
      `client pieces of one W1 step (13 messages, ${bytes.length} bytes serialised), CPU µs per call:`,
    );
    for (const [label, value] of pieces) console.log(`  ${label.padEnd(48)} ${value.toFixed(1)}`);
    const cpu = (s: Sample) => median(s.cpu);
    console.log(
      `RESULT checkpointer-cpu ours_put_cpu_us=${cpu(our.put).toFixed(0)} ours_writes_cpu_us=${cpu(our.putWrites).toFixed(0)} ours_get_cpu_us=${cpu(our.getTuple).toFixed(0)} floor_put_cpu_us=${cpu(bare.put).toFixed(0)} floor_writes_cpu_us=${cpu(bare.putWrites).toFixed(0)} floor_get_cpu_us=${cpu(bare.getTuple).toFixed(0)} step_cpu_ratio=${((cpu(our.put) + cpu(our.putWrites) + cpu(our.getTuple)) / (cpu(bare.put) + cpu(bare.putWrites) + cpu(bare.getTuple))).toFixed(2)}`,
    );
  } finally {
    await ours.close();
    await db.close();
    await floor.end();
    for (const name of [schema, floorSchema])
      await admin.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
    await admin.end();
  }
}
