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
import { createAgent } from 'langchain';
import { z } from 'zod';
import { governanceMiddleware } from '../src/middleware/index.js';
import { governedToolNode } from '../src/nodes/index.js';
import { scriptedModel } from '../src/testing/index.js';
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

/** Time spent inside a node (microseconds): wall clock, and this process's CPU time. */
interface NodeSamples {
  wall: number[];
  cpu: number[];
}

/** Wraps a node so the time spent inside it is recorded. */
function timed(
  node: { invoke(input: unknown, config: LangGraphRunnableConfig): Promise<unknown> },
  samples: NodeSamples,
) {
  return async (state: typeof MessagesAnnotation.State, config: LangGraphRunnableConfig) => {
    const cpu = process.cpuUsage();
    const start = performance.now();
    const result = await node.invoke(state, config);
    samples.wall.push((performance.now() - start) * 1000);
    const used = process.cpuUsage(cpu);
    samples.cpu.push(used.user + used.system);
    return result as { messages: AIMessage[] };
  };
}

function buildGraph(
  node: { invoke(input: unknown, config: LangGraphRunnableConfig): Promise<unknown> },
  samples: NodeSamples,
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

/** createAgent agents: bare, and with the middleware governing its tool (or bringing it). */
function buildAgents() {
  // One model turn asks for the lookup, the next answers: stateless, so any thread can replay it.
  const model = () =>
    scriptedModel([
      { toolCalls: [{ name: 'lookup_stock', args: { sku: 'SKU-42' } }] },
      'In stock.',
    ]);
  const bare = createAgent({ model: model(), tools: [plain], checkpointer: new MemorySaver() });
  const governedAgent = createAgent({
    model: model(),
    tools: [plain],
    checkpointer: new MemorySaver(),
    middleware: [governanceMiddleware({ safetyClasses: { lookup_stock: 'read' } })],
  });
  const gated = createAgent({
    model: model(),
    tools: [],
    checkpointer: new MemorySaver(),
    middleware: [governanceMiddleware({ tools: [governed] })],
  });
  return { bare, governedAgent, gated };
}

type Invokable = { invoke(input: unknown, config: unknown): Promise<unknown> };

/** Interleaved blocks so that drift (GC, load from other processes) hits every variant alike. */
async function interleaved(
  variants: Record<string, Invokable>,
  input: () => unknown,
  calls: number,
) {
  const totals: Record<string, number> = Object.fromEntries(
    Object.keys(variants).map((name) => [name, 0]),
  );
  for (let block = 0; block < calls / 50; block++) {
    for (const [name, variant] of Object.entries(variants)) {
      const start = performance.now();
      for (let index = 0; index < 50; index++)
        await variant.invoke(input(), { configurable: { thread_id: `${name}-${block}-${index}` } });
      totals[name]! += performance.now() - start;
    }
  }
  return totals;
}

/**
 * `npm run bench -- toolnode`: 1,000 read-class tool calls, governedToolNode vs ToolNode, and
 * 1,000 createAgent runs of one read-class call each, with governanceMiddleware vs bare.
 */
export async function run(): Promise<void> {
  const oursNode: NodeSamples = { wall: [], cpu: [] };
  const theirsNode: NodeSamples = { wall: [], cpu: [] };
  const ours = buildGraph(governedToolNode({ tools: [governed] }), oursNode);
  const theirs = buildGraph(new ToolNode([plain]), theirsNode);
  const input = () => ({ messages: [new HumanMessage('check stock')] });

  // Warm up both (JIT, zod, LangGraph internals), then discard those samples.
  for (let index = 0; index < 100; index++) {
    await ours.invoke(input(), { configurable: { thread_id: `warm-o-${index}` } });
    await theirs.invoke(input(), { configurable: { thread_id: `warm-t-${index}` } });
  }
  for (const samples of [oursNode, theirsNode]) {
    samples.wall.length = 0;
    samples.cpu.length = 0;
  }
  const nodes = await interleaved({ theirs, ours }, input, CALLS);
  const ratio = nodes.ours! / nodes.theirs!;
  const overhead = median(oursNode.wall) - median(theirsNode.wall);
  const overheadCpu = median(oursNode.cpu) - median(theirsNode.cpu);
  const line = (label: string, ms: number, samples: NodeSamples) =>
    console.log(
      `${label} ${CALLS} calls: ${ms.toFixed(0)} ms total, node p50 ${median(samples.wall).toFixed(0)} µs (cpu ${median(samples.cpu).toFixed(0)} µs), p99 ${percentile(samples.wall, 99).toFixed(0)} µs`,
    );
  line('ToolNode        ', nodes.theirs!, theirsNode);
  line('governedToolNode', nodes.ours!, oursNode);
  console.log(
    '(governed: pin check, validation, policy, audit chain of 3 events, at-most-once ledger, sanitiser)',
  );

  const agents = buildAgents();
  const ask = () => ({ messages: [{ role: 'user', content: 'Is SKU-42 in stock?' }] });
  for (let index = 0; index < 50; index++) {
    for (const [name, agent] of Object.entries(agents))
      await agent.invoke(ask() as never, { configurable: { thread_id: `warm-${name}-${index}` } });
  }
  const runs = await interleaved(agents as unknown as Record<string, Invokable>, ask, CALLS);
  const agentRatio = runs.governedAgent! / runs.bare!;
  const gatedRatio = runs.gated! / runs.bare!;
  console.log(
    `createAgent            ${CALLS} runs: ${runs.bare!.toFixed(0)} ms total (${((runs.bare! / CALLS) * 1000).toFixed(0)} µs per run)`,
  );
  console.log(
    `+ governanceMiddleware ${CALLS} runs: ${runs.governedAgent!.toFixed(0)} ms total (the agent's tool, classified read)`,
  );
  console.log(
    `+ governanceMiddleware ${CALLS} runs: ${runs.gated!.toFixed(0)} ms total (the middleware's governed tool, through the approval gate)`,
  );
  console.log(
    `RESULT toolnode ratio=${ratio.toFixed(3)} overhead_p50_us=${overhead.toFixed(0)} overhead_cpu_p50_us=${overheadCpu.toFixed(0)} agent_ratio=${agentRatio.toFixed(3)} agent_gate_ratio=${gatedRatio.toFixed(3)}`,
  );
}
