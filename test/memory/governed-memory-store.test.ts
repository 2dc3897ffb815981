import { vector } from '@electric-sql/pglite-pgvector';
import { HumanMessage } from '@langchain/core/messages';
import {
  type BaseStore,
  END,
  getStore,
  InMemoryStore,
  MemorySaver,
  MessagesAnnotation,
  START,
  StateGraph,
} from '@langchain/langgraph';
import { describe, expect, it } from 'vitest';
import { VeridexError } from '../../src/errors/index.js';
import { GovernedMemoryStore, LocalEmbeddings, memoryRules } from '../../src/memory/index.js';
import { describeEachDatabase } from '../support/databases.js';
import { makeMemory } from './memory-fixture.js';

/**
 * Behaviours LangGraph's InMemoryStore shows, asserted identically against it and against
 * GovernedMemoryStore (so the assertions describe BaseStore semantics, not our code).
 */
function storeContract(makeStore: () => BaseStore | Promise<BaseStore>): void {
  it('puts, gets, updates and deletes items, keeping createdAt across updates', async () => {
    const store = await makeStore();
    expect(await store.get(['users', 'u1'], 'prefs')).toBeNull();
    await store.put(['users', 'u1'], 'prefs', { theme: 'dark', size: 12 });
    const first = await store.get(['users', 'u1'], 'prefs');
    expect(first).toMatchObject({
      key: 'prefs',
      namespace: ['users', 'u1'],
      value: { theme: 'dark', size: 12 },
    });
    expect(first!.createdAt).toBeInstanceOf(Date);
    // Read the times now: InMemoryStore updates the returned item object in place.
    const created = first!.createdAt.getTime();
    const updated = first!.updatedAt.getTime();
    await new Promise((resolve) => setTimeout(resolve, 5));
    await store.put(['users', 'u1'], 'prefs', { theme: 'light' });
    const second = await store.get(['users', 'u1'], 'prefs');
    expect(second!.value).toEqual({ theme: 'light' });
    expect(second!.createdAt.getTime()).toBe(created);
    expect(second!.updatedAt.getTime()).toBeGreaterThan(updated);
    await store.delete(['users', 'u1'], 'prefs');
    expect(await store.get(['users', 'u1'], 'prefs')).toBeNull();
  });

  it('searches a namespace prefix with filters and pagination', async () => {
    const store = await makeStore();
    await store.put(['docs', 'a'], 'd1', { kind: 'report', score: 3, text: 'annual report' });
    await store.put(['docs', 'a'], 'd2', { kind: 'memo', score: 7, text: 'short memo' });
    await store.put(['docs', 'b'], 'd3', { kind: 'report', score: 9, text: 'quarterly report' });
    await store.put(['other'], 'o1', { kind: 'report', score: 5, text: 'not a doc' });
    const keys = async (options: Parameters<BaseStore['search']>[1]) =>
      (await store.search(['docs'], options)).map((item) => item.key).sort();
    expect(await keys({})).toEqual(['d1', 'd2', 'd3']);
    expect(await keys({ filter: { kind: 'report' } })).toEqual(['d1', 'd3']);
    expect(await keys({ filter: { score: { $gt: 3 } } })).toEqual(['d2', 'd3']);
    expect(await keys({ filter: { score: { $gte: 3, $lt: 9 } } })).toEqual(['d1', 'd2']);
    expect(await keys({ filter: { kind: { $ne: 'report' } } })).toEqual(['d2']);
    expect(await keys({ filter: { kind: { $in: ['memo', 'nothing'] } } })).toEqual(['d2']);
    expect(await keys({ filter: { kind: { $nin: ['memo'] } } })).toEqual(['d1', 'd3']);
    expect((await store.search(['docs', 'b'])).map((item) => item.key)).toEqual(['d3']);
    const page1 = await store.search(['docs'], { limit: 2, offset: 0 });
    const page2 = await store.search(['docs'], { limit: 2, offset: 2 });
    expect(page1).toHaveLength(2);
    expect([...page1, ...page2].map((item) => item.key).sort()).toEqual(['d1', 'd2', 'd3']);
  });

  it('ranks the most relevant item first for a query', async () => {
    const store = await makeStore();
    await store.put(['notes'], 'n1', { text: 'The deploy pipeline runs on GitHub Actions' });
    await store.put(['notes'], 'n2', { text: 'Alice prefers dark mode in the editor' });
    await store.put(['notes'], 'n3', { text: 'Invoices are paid on the fifth business day' });
    const results = await store.search(['notes'], {
      query: 'which editor theme does alice prefer',
      limit: 3,
    });
    expect(results[0]!.key).toBe('n2');
    expect(typeof results[0]!.score).toBe('number');
  });

  it('lists namespaces by prefix, suffix, wildcard and depth', async () => {
    const store = await makeStore();
    for (const namespace of [
      ['a', 'x', 'v1'],
      ['a', 'y', 'v1'],
      ['a', 'y', 'v2'],
      ['b', 'x', 'v1'],
    ]) {
      await store.put(namespace, 'k', { n: 1 });
    }
    expect(await store.listNamespaces()).toEqual([
      ['a', 'x', 'v1'],
      ['a', 'y', 'v1'],
      ['a', 'y', 'v2'],
      ['b', 'x', 'v1'],
    ]);
    expect(await store.listNamespaces({ prefix: ['a'] })).toEqual([
      ['a', 'x', 'v1'],
      ['a', 'y', 'v1'],
      ['a', 'y', 'v2'],
    ]);
    expect(await store.listNamespaces({ suffix: ['v1'] })).toEqual([
      ['a', 'x', 'v1'],
      ['a', 'y', 'v1'],
      ['b', 'x', 'v1'],
    ]);
    expect(await store.listNamespaces({ prefix: ['*', 'x'] })).toEqual([
      ['a', 'x', 'v1'],
      ['b', 'x', 'v1'],
    ]);
    expect(await store.listNamespaces({ maxDepth: 2 })).toEqual([
      ['a', 'x'],
      ['a', 'y'],
      ['b', 'x'],
    ]);
    expect(await store.listNamespaces({ limit: 2, offset: 1 })).toEqual([
      ['a', 'y', 'v1'],
      ['a', 'y', 'v2'],
    ]);
  });

  it('rejects invalid namespaces', async () => {
    const store = await makeStore();
    await expect(store.put([], 'k', { a: 1 })).rejects.toThrow(/empty/);
    await expect(store.put(['a.b'], 'k', { a: 1 })).rejects.toThrow(/periods/);
    await expect(store.put(['langgraph'], 'k', { a: 1 })).rejects.toThrow(/langgraph/);
  });

  it('serves a graph node through getStore()', async () => {
    const store = await makeStore();
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('remember', async () => {
        await getStore()!.put(['threads'], 'last', { said: 'hello' });
        return {};
      })
      .addEdge(START, 'remember')
      .addEdge('remember', END)
      .compile({ checkpointer: new MemorySaver(), store });
    await graph.invoke(
      { messages: [new HumanMessage('hi')] },
      { configurable: { thread_id: 't-store' } },
    );
    expect((await store.get(['threads'], 'last'))?.value).toEqual({ said: 'hello' });
  });
}

describe('InMemoryStore (reference behaviour)', () => {
  storeContract(
    () =>
      new InMemoryStore({ index: { dims: 256, embeddings: new LocalEmbeddings(), fields: ['$'] } }),
  );
});

describeEachDatabase(
  'GovernedMemoryStore',
  ({ db }) => {
    storeContract(() => new GovernedMemoryStore(makeMemory(db()).memory));

    it('puts through the policy: a denied put throws memory_write_denied and stores nothing', async () => {
      const store = new GovernedMemoryStore(
        makeMemory(db(), { rules: [memoryRules.denySecrets()] }).memory,
      );
      const error = await store
        .put(['users', 'u1'], 'creds', { token: 'ghp_0123456789abcdefghijklmnopqrstuvwxyzAB' })
        .catch((caught: unknown) => caught);
      expect(VeridexError.is(error, 'memory_write_denied')).toBe(true);
      expect(await store.get(['users', 'u1'], 'creds')).toBeNull();
    });

    it('keeps every value as a version and a re-put of the same value as no new version', async () => {
      const { memory } = makeMemory(db());
      const store = new GovernedMemoryStore(memory);
      await store.put(['cfg'], 'mode', { value: 'a' });
      await store.put(['cfg'], 'mode', { value: 'b' });
      await store.put(['cfg'], 'mode', { value: 'b' });
      await store.delete(['cfg'], 'mode');
      const { rows } = await db().query<{
        id: string;
        version: number;
        invalidation_reason: string | null;
      }>(
        "SELECT id, version, invalidation_reason FROM veridex_memory_records WHERE key = 'mode' ORDER BY version",
      );
      expect(rows.map((row) => [row.version, row.invalidation_reason])).toEqual([
        [1, 'superseded'],
        [2, 'deleted'],
      ]);
      expect((await memory.history(rows[0]!.id)).map((record) => record.value)).toEqual([
        { value: 'a' },
        { value: 'b' },
      ]);
    });

    it('shows facts written through the manager as items', async () => {
      const { memory } = makeMemory(db(), { namespace: ['users', 'u9'] });
      await memory.write({
        content: 'Uma prefers email',
        subject: 'uma',
        predicate: 'prefers channel',
        object: 'email',
      });
      const [item] = await new GovernedMemoryStore(memory).search(['users'], {
        query: 'how should we contact uma',
      });
      expect(item).toMatchObject({
        key: 'uma|prefers channel',
        namespace: ['users', 'u9'],
        value: { content: 'Uma prefers email', subject: 'uma', object: 'email', tier: 'semantic' },
      });
    });
  },
  { extensions: { vector } },
);
