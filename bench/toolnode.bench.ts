import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { tool as langchainTool } from '@langchain/core/tools';
import {
  END,
  type LangGraphRunnableConfig,
  MemorySaver,
  MessagesAnnotation,
  START,
  StateGraph,
} from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { z } from 'zod';
import { governedToolNode } from '../src/nodes/index.js';
import { tool } from '../src/tools/index.js';
import { median, percentile } from './stats.js';

const CALLS = 1_000;

const lookupSchema = z.object({ sku: z.string() });
const outputSchema = z.object({ sku: z.string(), inStock: z.boolean() });

// The same read-only work behind both nodes.
const lookup = async ({ sku }: { sku: string }) => ({ sku, inStock: sku.length % 2 === 0 });

const governed = tool({
  name: 'lookup_stock',
  description: 'Look up stock for a SKU.',
  safetyClass: 'read',
  input: lookupSchema,
  output: outputSchema,
  execute: ({ input }) => lookup(input),
});
const plain = langchainTool(async (input) => JSON.stringify(await lookup(input)), {
  name: 'lookup_stock',
  description: 'Look up stock for a SKU.',
  schema: lookupSchema,
});

/** Wraps a node so the time spent inside it is recorded (microseconds). */
function timed(
  node: { invoke(input: unknown, config: LangGraphRunnableConfig): Promise<unknown> },
  samples: number[],
) {
  return async (state: typeof MessagesAnnotation.State, config: LangGraphRunnableConfig) => {
    const start = performance.now();
    const result = await node.invoke(state, config);
    samples.push((performance.now() - start) * 1000);
    return result as { messages: AIMessage[] };
  };
}

function buildGraph(
  node: { invoke(input: unknown, config: LangGraphRunnableConfig): Promise<unknown> },
  samples: number[],
) {
  let call = 0;
  return new StateGraph(MessagesAnnotation)
    .addNode('model', () => {
      call += 1;
      return {
        messages: [
          new AIMessage({
            content: '',
            tool_calls: [
              {
                id: `call_${call}`,
                name: 'lookup_stock',
                args: { sku: `SKU-${call}` },
                type: 'tool_call',
              },
            ],
          }),
        ],
      };
    })
    .addNode('tools', timed(node, samples))
    .addEdge(START, 'model')
    .addEdge('model', 'tools')
    .addEdge('tools', END)
    .compile({ checkpointer: new MemorySaver() });
}

/** `npm run bench -- toolnode`: 1,000 read-class tool calls, governedToolNode vs ToolNode, one run. */
export async function run(): Promise<void> {
  const oursNode: number[] = [];
  const theirsNode: number[] = [];
  const ours = buildGraph(governedToolNode({ tools: [governed] }), oursNode);
  const theirs = buildGraph(new ToolNode([plain]), theirsNode);
  const input = () => ({ messages: [new HumanMessage('check stock')] });

  // Warm up both (JIT, zod, LangGraph internals), then discard those samples.
  for (let index = 0; index < 100; index++) {
    await ours.invoke(input(), { configurable: { thread_id: `warm-o-${index}` } });
    await theirs.invoke(input(), { configurable: { thread_id: `warm-t-${index}` } });
  }
  oursNode.length = 0;
  theirsNode.length = 0;

  // Interleave in blocks so that drift (GC, thermal) hits both equally.
  let oursMs = 0;
  let theirsMs = 0;
  for (let block = 0; block < CALLS / 50; block++) {
    let start = performance.now();
    for (let index = 0; index < 50; index++)
      await theirs.invoke(input(), { configurable: { thread_id: `t-${block}-${index}` } });
    theirsMs += performance.now() - start;
    start = performance.now();
    for (let index = 0; index < 50; index++)
      await ours.invoke(input(), { configurable: { thread_id: `o-${block}-${index}` } });
    oursMs += performance.now() - start;
  }
  const ratio = oursMs / theirsMs;
  const overhead = median(oursNode) - median(theirsNode);
  console.log(
    `ToolNode         ${CALLS} calls: ${theirsMs.toFixed(0)} ms total, node p50 ${median(theirsNode).toFixed(0)} µs, p99 ${percentile(theirsNode, 99).toFixed(0)} µs`,
  );
  console.log(
    `governedToolNode ${CALLS} calls: ${oursMs.toFixed(0)} ms total, node p50 ${median(oursNode).toFixed(0)} µs, p99 ${percentile(oursNode, 99).toFixed(0)} µs`,
  );
  console.log(
    '(governed: pin check, validation, policy, audit chain of 3 events, at-most-once ledger, sanitiser)',
  );
  console.log(`RESULT toolnode ratio=${ratio.toFixed(3)} overhead_p50_us=${overhead.toFixed(0)}`);
}
