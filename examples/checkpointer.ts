// Swap LangGraph's checkpointer for PostgresCheckpointer (embedded PGlite here, no server),
// suspend a run in interrupt(), resume it, then check the thread's hash chain and prune it.
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import {
  Command,
  END,
  interrupt,
  MessagesAnnotation,
  START,
  StateGraph,
} from '@langchain/langgraph';
import { PostgresCheckpointer } from '@veridex/langgraph/checkpointer';

// With a server: PostgresCheckpointer.fromUrl(process.env.DATABASE_URL)
const checkpointer = PostgresCheckpointer.fromUrl('memory://');
await checkpointer.setup();

const graph = new StateGraph(MessagesAnnotation)
  .addNode('propose', () => ({
    messages: [new AIMessage('I will refund order 1042 (EUR 89.00).')],
  }))
  .addNode('approve', () => {
    const decision = interrupt<{ question: string }, string>({ question: 'Refund EUR 89.00?' });
    return { messages: [new HumanMessage(`approver: ${decision}`)] };
  })
  .addNode('refund', () => ({ messages: [new AIMessage('Refund issued.')] }))
  .addEdge(START, 'propose')
  .addEdge('propose', 'approve')
  .addEdge('approve', 'refund')
  .addEdge('refund', END)
  .compile({ checkpointer });

const config = { configurable: { thread_id: 'refund-1042' } };
for (let turn = 1; turn <= 3; turn++) {
  const suspended = await graph.invoke(
    { messages: [new HumanMessage(`refund request #${turn}`)] },
    config,
  );
  const [pending] =
    (suspended as { __interrupt__?: Array<{ value: unknown }> }).__interrupt__ ?? [];
  console.log(`turn ${turn}: suspended, asking`, pending?.value);
  await graph.invoke(new Command({ resume: `approved (turn ${turn})` }), config);
}
const state = await graph.getState(config);
console.log(`${state.values.messages.length} messages:`, state.values.messages.at(-1)?.content);

const report = await checkpointer.verifyThread('refund-1042');
console.log(
  `chain intact: ${report.valid} (${report.checkpoints} checkpoints, head ${report.headHash?.slice(0, 16)}…)`,
);
if (!report.valid) throw new Error(`tampered: ${JSON.stringify(report.issues)}`);

const pruned = await checkpointer.prune('refund-1042', { keepLast: 2 });
console.log(
  `pruned ${pruned.checkpoints} old checkpoints; state still has ${(await graph.getState(config)).values.messages.length} messages`,
);
if (!(await checkpointer.verifyThread('refund-1042')).valid)
  throw new Error('prune broke the chain');

await checkpointer.close();
