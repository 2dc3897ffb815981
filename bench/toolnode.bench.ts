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

/**
 * Runs `calls` invocations of every variant in interleaved blocks of 50, so that drift (GC,
 * load from other processes) hits every variant alike. Returns each variant's total and its
 * block times.
 */
async function interleaved(
  variants: Record<string, Invokable>,
  input: () => unknown,
  calls: number,
  phase: string,
) {
  const blocks: Record<string, number[]> = Object.fromEntries(
    Object.keys(variants).map((name) => [name, []]),
  );
  for (let block = 0; block < calls / 50; block++) {
    for (const [name, variant] of Object.entries(variants)) {
      const start = performance.now();
      for (let index = 0; index < 50; index++) {
        const thread_id = `${phase}-${name}-${block}-${index}`;
        await variant.invoke(input(), { configurable: { thread_id } });
      }
      blocks[name]!.push(performance.now() - start);
    }
  }
  const total = (name: string) => blocks[name]!.reduce((sum, ms) => sum + ms, 0);
  return {
    total,
    /**
     * How much slower `name` is than `baseline`: the median, over the block pairs run back to
     * back, of their time ratio. A pause that hits one block (a major GC, another process on
     * the machine) moves one pair, not the result; the ratio of totals is printed beside it.
     */
    ratio: (name: string, baseline: string) =>
      median(blocks[name]!.map((ms, block) => ms / blocks[baseline]![block]!)),
  };
}

/** Node p50s (wall, CPU) of both sides and their difference, for the samples since `from`. */
function nodeStats(ours: NodeSamples, theirs: NodeSamples, from: number) {
  const p50 = (samples: number[]) => median(samples.slice(from));
  return {
    overhead: p50(ours.wall) - p50(theirs.wall),
    overheadCpu: p50(ours.cpu) - p50(theirs.cpu),
  };
}

/**
 * `npm run bench -- toolnode`: 1,000 read-class tool calls, governedToolNode vs ToolNode, and
 * 1,000 createAgent runs of one read-class call each, with governanceMiddleware vs bare. Both
 * are measured twice: over the first 1,000 (calls or runs) of a fresh process, while V8 is still
 * compiling the code of both sides, and over the next 1,000, once it has settled (steady state:
 * what a long-running service sees).
 */
export async function run(): Promise<void> {
  const oursNode: NodeSamples = { wall: [], cpu: [] };
  const theirsNode: NodeSamples = { wall: [], cpu: [] };
  const ours = buildGraph(governedToolNode({ tools: [governed] }), oursNode);
  const theirs = buildGraph(new ToolNode([plain]), theirsNode);
  const input = () => ({ messages: [new HumanMessage('check stock')] });

  const first = await interleaved({ theirs, ours }, input, CALLS, 'first');
  const firstStats = nodeStats(oursNode, theirsNode, 0);
  const nodes = await interleaved({ theirs, ours }, input, CALLS, 'steady');
  const ratio = nodes.ratio('ours', 'theirs');
  const steady = nodeStats(oursNode, theirsNode, CALLS);
  const line = (label: string, ms: number, samples: NodeSamples) => {
    const wall = samples.wall.slice(CALLS);
    console.log(
      `${label} ${CALLS} calls: ${ms.toFixed(0)} ms total, node p50 ${median(wall).toFixed(0)} µs (cpu ${median(samples.cpu.slice(CALLS)).toFixed(0)} µs), p99 ${percentile(wall, 99).toFixed(0)} µs`,
    );
  };
  console.log(`steady state (after ${CALLS} calls each):`);
  line('ToolNode        ', nodes.total('theirs'), theirsNode);
  line('governedToolNode', nodes.total('ours'), oursNode);
  console.log(
    `ratio ${ratio.toFixed(3)} (median of block pairs; of totals ${(nodes.total('ours') / nodes.total('theirs')).toFixed(3)})`,
  );
  const firstRatio = first.ratio('ours', 'theirs');
  console.log(
    `first ${CALLS} calls of the process: ratio ${firstRatio.toFixed(3)}, added p50 ${firstStats.overhead.toFixed(0)} µs`,
  );
  console.log(
    '(governed: pin check, validation, policy, audit chain of 3 events, at-most-once ledger, sanitiser)',
  );

  const agents = buildAgents() as unknown as Record<string, Invokable>;
  const ask = () => ({ messages: [{ role: 'user', content: 'Is SKU-42 in stock?' }] });
  const firstRuns = await interleaved(agents, ask, CALLS, 'first');
  const runs = await interleaved(agents, ask, CALLS, 'steady');
  const agentRatio = runs.ratio('governedAgent', 'bare');
  const gatedRatio = runs.ratio('gated', 'bare');
  const perRun = (name: string) => `${((runs.total(name) / CALLS) * 1000).toFixed(0)} µs per run`;
  console.log(`createAgent            ${CALLS} runs: ${perRun('bare')}`);
  console.log(
    `+ governanceMiddleware ${CALLS} runs: ${perRun('governedAgent')}, ratio ${agentRatio.toFixed(3)} (of totals ${(runs.total('governedAgent') / runs.total('bare')).toFixed(3)}) (the agent's tool, classified read)`,
  );
  console.log(
    `+ governanceMiddleware ${CALLS} runs: ${perRun('gated')}, ratio ${gatedRatio.toFixed(3)} (the middleware's governed tool, through the approval gate)`,
  );
  const firstAgentRatio = firstRuns.ratio('governedAgent', 'bare');
  console.log(
    `first ${CALLS} runs of each: middleware ratio ${firstAgentRatio.toFixed(3)}, through the gate ${firstRuns.ratio('gated', 'bare').toFixed(3)}`,
  );
  console.log(
    `RESULT toolnode ratio=${ratio.toFixed(3)} overhead_p50_us=${steady.overhead.toFixed(0)} overhead_cpu_p50_us=${steady.overheadCpu.toFixed(0)} agent_ratio=${agentRatio.toFixed(3)} agent_gate_ratio=${gatedRatio.toFixed(3)} first_ratio=${firstRatio.toFixed(3)} first_overhead_p50_us=${firstStats.overhead.toFixed(0)} first_agent_ratio=${firstAgentRatio.toFixed(3)}`,
  );
}
