import { getConfig } from '@langchain/langgraph';
import {
  BaseStore,
  type GetOperation,
  getTextAtPath,
  type Item,
  type ListNamespacesOperation,
  type MatchCondition,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
  validateNamespace,
} from '@langchain/langgraph-checkpoint';
import { canonicalJson, sha256Hex } from '../audit/index.js';
import { VeridexError } from '../errors/index.js';
import type { MemorySource } from '../policy/index.js';
import { currentConversation } from './current-conversation.js';
import type { MemoryManager } from './memory-manager.js';
import { type RecordRow, rowToRecord } from './record-row.js';
import {
  CURRENT_OF_KEYS,
  LIST_NAMESPACES,
  listRecords,
  recordFilterSql,
  SqlParams,
} from './sql.js';
import type { MemoryRecord, MemoryWriteContext, StoredTier } from './types.js';

/** Options for {@link GovernedMemoryStore}. */
export interface GovernedMemoryStoreOptions {
  /** Tier of items written through the store. Default `semantic`. */
  tier?: StoredTier;
  /**
   * Source recorded in provenance (and seen by policy rules). Default `model`: what a node
   * puts may come from anywhere in the conversation, so it is not trusted as `system` unless
   * you say so. A put called on this store inside a graph node also has its source derived from
   * the node's conversation, and the less trusted of the two is recorded (text only tool output
   * supplied is `tool`-sourced). Puts through LangGraph's own store handle (`getStore()`,
   * `config.store`) are batched and run outside the node, so only this option applies to them.
   */
  source?: MemorySource;
  /**
   * Fields whose text is indexed (full text + embedding), as in LangGraph's `IndexConfig.fields`.
   * Default `['$']`: the whole value.
   */
  fields?: readonly string[];
  /** Confidence of stored items. Default 1. */
  confidence?: number;
}

/**
 * A LangGraph `BaseStore` over the {@link MemoryManager}'s tables, so code written for
 * `store.put/get/search/delete/listNamespaces` (e.g. `createReactAgent({ store })`, or
 * `getStore()` inside a node) gets governed memory unchanged: every put is a `memory_write`
 * proposal (a denied put throws `memory_write_denied`), a changed value is a new version,
 * a delete invalidates instead of erasing, and `search({ query })` is the hybrid recall.
 * Records written through the manager appear as items too (their value describes the fact).
 *
 * Within one `batch`, reads see the state before the batch's writes, and the last put to a
 * key wins — as in LangGraph's `InMemoryStore`.
 *
 * @example
 * const store = new GovernedMemoryStore(memory);
 * const graph = builder.compile({ checkpointer, store });
 */
export class GovernedMemoryStore extends BaseStore {
  readonly #manager: MemoryManager;
  readonly #options: GovernedMemoryStoreOptions;

  constructor(manager: MemoryManager, options: GovernedMemoryStoreOptions = {}) {
    super();
    this.#manager = manager;
    this.#options = options;
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const results: unknown[] = [];
    const puts = new Map<string, PutOperation>();
    for (const operation of operations) {
      if ('namespacePrefix' in operation) {
        results.push(await this.#search(operation));
      } else if ('value' in operation) {
        validateNamespace(operation.namespace, { allowReservedRoot: true });
        puts.set(canonicalJson([operation.namespace, operation.key]), operation);
        results.push(undefined);
      } else if ('key' in operation) {
        results.push(await this.#get(operation));
      } else {
        results.push(await this.#listNamespaces(operation));
      }
    }
    if (puts.size > 0) await this.#put([...puts.values()]);
    return results as OperationResults<Op>;
  }

  async #get(operation: GetOperation): Promise<Item | null> {
    const [record] = await this.#current([operation]);
    return record ? toItem(record) : null;
  }

  async #search(operation: SearchOperation): Promise<SearchItem[]> {
    const limit = operation.limit ?? 10;
    const offset = operation.offset ?? 0;
    if (operation.query) {
      const hits = await this.#manager.recall(operation.query, {
        namespace: operation.namespacePrefix,
        limit,
        offset,
        linked: 0,
        // A store search is side-effect free, as BaseStore callers expect.
        reinforce: false,
        ...(operation.filter ? { filter: operation.filter } : {}),
      });
      return hits.map((hit) => ({ ...toItem(hit.record), score: hit.score }));
    }
    return this.#manager.withStorage(async (db) => {
      const params = new SqlParams();
      const where = recordFilterSql(
        {
          namespacePath: operation.namespacePrefix.join('.'),
          ...(operation.filter ? { value: operation.filter } : {}),
        },
        params,
      );
      const sql = listRecords(where, params.add(limit), params.add(offset));
      const { rows } = await db.query<RecordRow>(sql, params.values);
      return rows.map((row) => toItem(rowToRecord(row)));
    });
  }

  async #put(operations: readonly PutOperation[]): Promise<void> {
    const context = currentContext();
    const deletes = operations.filter((operation) => operation.value === null);
    for (const operation of deletes) {
      await this.#manager.forget(operation.namespace, operation.key, context, 'deleted');
    }
    const writes = operations.filter((operation) => operation.value !== null);
    if (writes.length === 0) return;
    const previous = new Map(
      (await this.#current(writes)).map((record) => [
        canonicalJson([[...record.namespace], record.key]),
        record.id,
      ]),
    );
    const outcomes = await this.#manager.proposeMany(
      writes.map((operation) => {
        // Values are stored as JSON: normalise first (Dates become strings, undefined drops).
        const value = JSON.parse(JSON.stringify(operation.value)) as Record<string, unknown>;
        const before = previous.get(canonicalJson([operation.namespace, operation.key])) ?? null;
        return {
          tier: this.#options.tier ?? 'semantic',
          namespace: operation.namespace,
          key: operation.key,
          value,
          content: indexText(value, operation.index, this.#options.fields),
          confidence: this.#options.confidence ?? 1,
          source: this.#options.source ?? 'model',
          // A put of the same value over the same version re-runs to the same write id.
          writeId: `ms_${sha256Hex(canonicalJson([operation.namespace, operation.key, value, before])).slice(0, 32)}`,
        };
      }),
      context,
      { replaces: true, similarity: false },
    );
    for (const outcome of outcomes) {
      if (outcome.status === 'denied' || outcome.status === 'escalated') {
        const reason =
          outcome.status === 'denied' ? outcome.reason : 'the policy requires an approval';
        throw new VeridexError(
          'memory_write_denied',
          `store.put was not stored: rule "${outcome.decision.ruleId}" ${outcome.status === 'denied' ? 'denied it' : 'escalated it'} (${reason}).`,
          { details: { ruleId: outcome.decision.ruleId, verdict: outcome.decision.verdict } },
        );
      }
    }
  }

  async #current(operations: ReadonlyArray<{ namespace: string[]; key: string }>) {
    return this.#manager.withStorage(async (db) => {
      const { rows } = await db.query<RecordRow>(CURRENT_OF_KEYS, [
        operations.map((operation) => operation.namespace.join('.')),
        operations.map((operation) => operation.key),
      ]);
      return rows.map(rowToRecord);
    });
  }

  async #listNamespaces(operation: ListNamespacesOperation): Promise<string[][]> {
    const { rows } = await this.#manager.withStorage((db) =>
      db.query<{ namespace: string[] }>(LIST_NAMESPACES),
    );
    let namespaces = rows.map((row) => row.namespace);
    for (const condition of operation.matchConditions ?? []) {
      namespaces = namespaces.filter((namespace) => matches(condition, namespace));
    }
    if (operation.maxDepth !== undefined) {
      const depth = operation.maxDepth;
      const unique = new Map(
        namespaces.map((namespace) => {
          const truncated = namespace.slice(0, depth);
          return [truncated.join(':'), truncated];
        }),
      );
      namespaces = [...unique.values()];
    }
    namespaces.sort((a, b) => a.join(':').localeCompare(b.join(':')));
    const offset = operation.offset ?? 0;
    return namespaces.slice(offset, offset + (operation.limit ?? namespaces.length));
  }
}

/** A record as a LangGraph item: store items keep their value; facts describe themselves. */
function toItem(record: MemoryRecord): Item {
  return {
    value: record.value ?? {
      content: record.content,
      tier: record.tier,
      confidence: record.confidence,
      tags: [...record.tags],
      ...(record.subject ? { subject: record.subject } : {}),
      ...(record.predicate ? { predicate: record.predicate } : {}),
      ...(record.object ? { object: record.object } : {}),
    },
    key: record.key,
    namespace: [...record.namespace],
    createdAt: new Date(record.createdAt),
    updatedAt: new Date(record.storedAt),
  };
}

function indexText(
  value: Record<string, unknown>,
  index: false | string[] | undefined,
  fields: readonly string[] | undefined,
): string {
  const paths = index === false || index === undefined ? (fields ?? ['$']) : index;
  const texts = paths.flatMap((path) =>
    path === '$' ? [JSON.stringify(value)] : getTextAtPath(value, path),
  );
  const text = texts.join('\n').trim();
  // Content must not be empty; an item without indexable text is still findable by key.
  return text.length > 0 ? text : JSON.stringify(value);
}

function matches(condition: MatchCondition, namespace: readonly string[]): boolean {
  const { path, matchType } = condition;
  if (path.length > namespace.length) return false;
  const start = matchType === 'prefix' ? 0 : namespace.length - path.length;
  return path.every((label, index) => label === '*' || label === namespace[start + index]);
}

// The thread of the node calling the store, and its conversation: inside a graph, a put's source
// is derived from the conversation (text that only tool output holds is `tool`-sourced), as for
// every other memory write; the store's configured `source` can lower that, never raise it.
function currentContext(): MemoryWriteContext {
  const conversation = currentConversation();
  const conversed = conversation ? { conversation } : {};
  try {
    const configurable = getConfig()?.configurable;
    const threadId = configurable?.thread_id;
    return typeof threadId === 'string'
      ? { threadId, runId: threadId, ...conversed }
      : { threadId: 'store', ...conversed };
  } catch {
    return { threadId: 'store', ...conversed };
  }
}
