// Four-tier memory with policy-gated writes: facts with conflict resolution and history,
// procedures for the system prompt, hybrid recall, a denied write, and the memory nodes in a
// LangGraph graph (scripted model, so no API key is needed). Runs on in-memory PGlite.
import { vector } from '@electric-sql/pglite-pgvector';
import { HumanMessage } from '@langchain/core/messages';
import {
  Annotation,
  END,
  MemorySaver,
  MessagesAnnotation,
  START,
  StateGraph,
} from '@langchain/langgraph';
import { AuditLog, PostgresAuditStore } from '@veridex/langgraph/audit';
import { createDatabase, migrate } from '@veridex/langgraph/db';
import { GovernedMemoryStore, MemoryManager, memoryRules } from '@veridex/langgraph/memory';
import { MemoryAnnotation, memoryNodes } from '@veridex/langgraph/nodes';
import { PolicyEngine } from '@veridex/langgraph/policy';
import { scriptedModel } from '@veridex/langgraph/testing';

const db = await createDatabase({ dataDir: 'memory://', extensions: { vector } }); // or { url }
await migrate(db);
const audit = new AuditLog({ store: new PostgresAuditStore(db) });
const policy = new PolicyEngine({
  audit,
  rules: [
    memoryRules.denySecrets(),
    memoryRules.toolSourcedWrites('escalate'),
    memoryRules.minConfidence(0.4),
    memoryRules.writeQuota({ perThread: 100, db }),
  ],
});
const memory = new MemoryManager({ db, policy, audit, namespace: ['acme', 'user-42'] });
console.log(`vectors: ${(await memory.setup()).mode}`);

// Semantic facts: the same subject and predicate conflict; the higher confidence wins.
const context = { threadId: 'onboarding' };
await memory.write(
  { content: 'Dana lives in Lisbon', subject: 'Dana', predicate: 'lives in', confidence: 0.6 },
  context,
);
const moved = await memory.write(
  { content: 'Dana lives in Porto', subject: 'Dana', predicate: 'lives in', confidence: 0.9 },
  context,
);
if (moved.status === 'written') {
  const history = await memory.history(moved.record.id);
  console.log(
    'history:',
    history
      .map(
        (record) =>
          `v${record.version} ${record.content}${record.invalidatedAt ? ' (invalidated)' : ''}`,
      )
      .join(' → '),
  );
}

// Procedural memory feeds the context compiler's system section.
await memory.setProcedure('refunds', 'Refunds above 100 EUR need a manager.');
console.log('procedures:', await memory.proceduralFor());

// Every write is a proposal: a credential never reaches memory.
const denied = await memory.propose(
  { content: 'Our Stripe key is sk_live_0123456789abcdefABCDEF' },
  context,
);
console.log(
  `secret write: ${denied.status}${denied.status === 'denied' ? ` by ${denied.ruleId}` : ''}`,
);

// Hybrid recall (full text + vectors), decay and validity applied.
const [hit] = await memory.recall('where does dana live now?');
console.log(`recall: ${hit?.record.content} (score ${hit?.score.toFixed(2)})`);

// The same storage as a LangGraph BaseStore.
const store = new GovernedMemoryStore(memory);
await store.put(['acme', 'user-42'], 'ui', { theme: 'dark' });
console.log('store.get:', (await store.get(['acme', 'user-42'], 'ui'))?.value);

// retrieve → model → evolve in a graph with a checkpointer.
const State = Annotation.Root({ ...MessagesAnnotation.spec, ...MemoryAnnotation.spec });
const model = scriptedModel(['Noted: you prefer email.'], { whenExhausted: 'repeat-last' });
const { retrieve, evolve } = memoryNodes(memory);
const graph = new StateGraph(State)
  .addNode('retrieve', retrieve)
  .addNode('agent', async (state: typeof State.State) => ({
    messages: [await model.invoke(state.messages)],
  }))
  .addNode('evolve', evolve)
  .addEdge(START, 'retrieve')
  .addEdge('retrieve', 'agent')
  .addEdge('agent', 'evolve')
  .addEdge('evolve', END)
  .compile({ checkpointer: new MemorySaver() });
const result = await graph.invoke(
  { messages: [new HumanMessage('I prefer email over phone calls.')] },
  { configurable: { thread_id: 'support-1' } },
);
console.log(
  'evolve:',
  result.memoryWrites.map((write) => `${write.status}: ${write.content}`),
);
console.log(`audit chain valid: ${(await audit.verify('onboarding')).valid}`);
await db.close();
