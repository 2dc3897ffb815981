import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AuditLog, PostgresAuditStore } from '../../src/audit/index.js';
import { createDatabase, type Database } from '../../src/db/index.js';
import { executeTool } from '../../src/tools/execute-tool.js';
import {
  type IdempotencyStore,
  idempotencyKeyFor,
  MemoryIdempotencyStore,
  PostgresIdempotencyStore,
  tool,
} from '../../src/tools/index.js';
import { describeEachDatabase } from '../support/databases.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function transferTool(
  behaviour: (calls: number) => Promise<{ receipt: string }> = async (calls) => ({
    receipt: `r${calls}`,
  }),
  extra: object = {},
) {
  let calls = 0;
  const keys: string[] = [];
  const transfer = tool({
    name: 'transfer',
    description: 'Send money.',
    safetyClass: 'financial',
    idempotency: 'required',
    input: z.object({ amount: z.number().int(), to: z.string() }),
    output: z.object({ receipt: z.string() }),
    ...extra,
    async execute({ idempotencyKey }) {
      calls++;
      keys.push(idempotencyKey);
      return behaviour(calls);
    },
  });
  return { transfer, calls: () => calls, keys };
}

const args = { amount: 500, to: 'acct_1' };
const call = { threadId: 'th', toolCallId: 'call_1', proposalHash: 'p'.repeat(64) };

describe('idempotencyKeyFor', () => {
  it('is deterministic and changes with each part', () => {
    const key = idempotencyKeyFor(call);
    expect(key).toMatch(/^idem_[0-9a-f]{64}$/);
    expect(idempotencyKeyFor({ ...call })).toBe(key);
    const others = [
      idempotencyKeyFor({ ...call, threadId: 'th2' }),
      idempotencyKeyFor({ ...call, toolCallId: 'call_2' }),
    ];
    expect(new Set([key, ...others]).size).toBe(3);
    // The proposal (and with it the tool's description) is not part of the key: a retried call
    // finds its earlier execution after a deploy reworded the tool.
    expect(idempotencyKeyFor({ threadId: 'th', toolCallId: 'call_1' })).toBe(key);
  });
});

function runToolContract(store: () => IdempotencyStore, second: () => Promise<IdempotencyStore>) {
  it('executes once per key and returns the stored result to a repeated call', async () => {
    const { transfer, calls, keys } = transferTool();
    const first = await executeTool(transfer, args, { ...call, idempotency: store() });
    const again = await executeTool(transfer, args, { ...call, idempotency: store() });
    expect(first).toMatchObject({
      status: 'success',
      content: '{"receipt":"r1"}',
      replayed: false,
      attempts: 1,
    });
    expect(again).toMatchObject({
      status: 'success',
      content: '{"receipt":"r1"}',
      replayed: true,
      attempts: 0,
    });
    expect(calls()).toBe(1);
    expect(keys).toEqual([idempotencyKeyFor(call)]);
  });

  it('runs a second execution for another tool call id', async () => {
    const { transfer, calls } = transferTool();
    await executeTool(transfer, args, { ...call, idempotency: store() });
    await executeTool(transfer, args, { ...call, toolCallId: 'call_2', idempotency: store() });
    expect(calls()).toBe(2);
  });

  it('executes once when two processes run the same call at the same time; both get the result', async () => {
    const { transfer, calls } = transferTool(async (n) => {
      await sleep(80);
      return { receipt: `r${n}` };
    });
    const other = await second();
    const [a, b] = await Promise.all([
      executeTool(transfer, args, { ...call, idempotency: store() }),
      executeTool(transfer, args, { ...call, idempotency: other }),
    ]);
    expect(calls()).toBe(1);
    expect([a.status, b.status]).toEqual(['success', 'success']);
    expect(a.status === 'success' && b.status === 'success' && [a.content, b.content]).toEqual([
      '{"receipt":"r1"}',
      '{"receipt":"r1"}',
    ]);
    expect([a.replayed, b.replayed].sort()).toEqual([false, true]);
  });

  it('throws idempotency_busy (no answer to record) when the concurrent execution outlasts the wait', async () => {
    const { transfer } = transferTool(async () => {
      await sleep(300);
      return { receipt: 'slow' };
    });
    const first = executeTool(transfer, args, { ...call, idempotency: store() });
    await sleep(20);
    const second = executeTool(transfer, args, {
      ...call,
      idempotency: { store: store(), waitMs: 50 },
    });
    await expect(second).rejects.toMatchObject({ code: 'idempotency_busy' });
    await first;
  });

  it('stores a definitive failure and returns it without executing again', async () => {
    const { transfer, calls } = transferTool(async () => {
      throw new Error('card declined');
    });
    const first = await executeTool(transfer, args, { ...call, idempotency: store() });
    const again = await executeTool(transfer, args, { ...call, idempotency: store() });
    expect(first).toMatchObject({
      status: 'error',
      code: 'tool_failed',
      message: 'Tool "transfer" failed: card declined',
    });
    expect(again).toMatchObject({
      status: 'error',
      code: 'tool_failed',
      message: first.status === 'error' ? first.message : '',
      replayed: true,
    });
    expect(calls()).toBe(1);
  });

  it('never re-executes a call whose earlier execution crashed midway: idempotency_in_doubt until resolved', async () => {
    const { transfer, calls } = transferTool();
    const key = idempotencyKeyFor(call);
    // A process reserved the key, started the transfer, and died.
    await store().reserve(key, { owner: 'dead-process', toolName: 'transfer', leaseMs: 60_000 });
    await store().markExecuting(key, 'dead-process', 30);
    await sleep(60);
    const result = await executeTool(transfer, args, { ...call, idempotency: store() });
    expect(result).toMatchObject({ status: 'error', code: 'idempotency_in_doubt' });
    expect(calls()).toBe(0);
    await store().resolve(key, {
      state: 'completed',
      result: { content: '{"receipt":"found"}', output: { receipt: 'found' }, findings: [] },
    });
    expect(await executeTool(transfer, args, { ...call, idempotency: store() })).toMatchObject({
      status: 'success',
      content: '{"receipt":"found"}',
      replayed: true,
    });
    expect(calls()).toBe(0);
  });

  it('marks a timed-out execution in_doubt (it may have happened)', async () => {
    const { transfer, calls } = transferTool(() => new Promise(() => undefined), { timeoutMs: 30 });
    expect(await executeTool(transfer, args, { ...call, idempotency: store() })).toMatchObject({
      status: 'error',
      code: 'tool_timeout',
    });
    expect(await executeTool(transfer, args, { ...call, idempotency: store() })).toMatchObject({
      status: 'error',
      code: 'idempotency_in_doubt',
    });
    expect(calls()).toBe(1);
    expect((await store().get(idempotencyKeyFor(call)))?.state).toBe('in_doubt');
  });

  it('passes the same idempotency key to every retry attempt', async () => {
    const { transfer, keys } = transferTool(
      async (n) => {
        if (n < 3) throw Object.assign(new Error('503'), { retryable: true });
        return { receipt: 'ok' };
      },
      { retry: { attempts: 3, backoffMs: 1 } },
    );
    expect(await executeTool(transfer, args, { ...call, idempotency: store() })).toMatchObject({
      status: 'success',
      attempts: 3,
    });
    expect(new Set(keys)).toEqual(new Set([idempotencyKeyFor(call)]));
    expect(keys).toHaveLength(3);
  });
}

describe('executeTool with a MemoryIdempotencyStore', () => {
  let current = new MemoryIdempotencyStore();
  beforeEach(() => {
    current = new MemoryIdempotencyStore();
  });
  runToolContract(
    () => current,
    async () => current,
  );

  it('derives a deterministic key from the arguments for a direct call without a tool call id', async () => {
    const { transfer, calls } = transferTool();
    await executeTool(transfer, args, { threadId: 'direct', idempotency: current });
    await executeTool(transfer, args, { threadId: 'direct', idempotency: current });
    await executeTool(
      transfer,
      { ...args, amount: 501 },
      { threadId: 'direct', idempotency: current },
    );
    expect(calls()).toBe(2);
  });
});

describeEachDatabase('executeTool with a PostgresIdempotencyStore', ({ db, open }) => {
  runToolContract(
    () => new PostgresIdempotencyStore(db()),
    async () => new PostgresIdempotencyStore((await open()) as Database),
  );
});

describe('executeTool when the idempotency database is down', () => {
  it('throws db_unavailable instead of reporting a tool error, and executes nothing', async () => {
    const unreachable = await createDatabase({
      url: 'postgres://postgres@127.0.0.1:1/none',
      maxConnections: 1,
    });
    const { transfer, calls } = transferTool();
    try {
      await expect(
        executeTool(transfer, args, {
          ...call,
          idempotency: new PostgresIdempotencyStore(unreachable),
        }),
      ).rejects.toMatchObject({
        code: 'db_unavailable',
      });
    } finally {
      await unreachable.close();
    }
    expect(calls()).toBe(0);
  });

  it('throws db_unavailable when the audit log cannot be written, instead of reporting success', async () => {
    const unreachable = await createDatabase({
      url: 'postgres://postgres@127.0.0.1:1/none',
      maxConnections: 1,
    });
    const audit = new AuditLog({ store: new PostgresAuditStore(unreachable) });
    const { transfer } = transferTool();
    try {
      await expect(executeTool(transfer, args, { ...call, audit })).rejects.toMatchObject({
        code: 'db_unavailable',
      });
    } finally {
      await unreachable.close();
    }
  });
});
