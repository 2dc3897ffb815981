import { readFileSync } from 'node:fs';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { dereference, validate } from '@readme/openapi-parser';
import { exportThread, fromMcpClient, fromOpenAPI, importThread } from '../src/adapters/index.js';
import { locatePoisoning, modelViewText } from '../src/adapters/tool-poisoning.js';
import { AuditLog, canonicalJson } from '../src/audit/index.js';
import { otelExporter } from '../src/otel/index.js';
import { MemoryPinStore } from '../src/tools/index.js';
import { median, ms, timeRepeated } from './stats.js';

const PAYMENTS = new URL('../test/adapters/fixtures/openapi/payments.json', import.meta.url);

async function openapi(): Promise<void> {
  const spec = JSON.parse(readFileSync(PAYMENTS, 'utf8'));
  const baseline = await timeRepeated(10, () =>
    dereference(structuredClone(spec), { resolve: { external: false } }),
  );
  const validation = await timeRepeated(10, () =>
    validate(structuredClone(spec), { resolve: { external: false } }),
  );
  const ours = await timeRepeated(10, () => fromOpenAPI(spec, { lockFile: false }));
  console.log(
    `OpenAPI payments.json (69 operations): parser dereference ${ms(median(baseline))} ms, parser validate ${ms(median(validation))} ms, fromOpenAPI (both + 69 tools) ${ms(median(ours))} ms`,
  );
  console.log(
    `RESULT openapi operations=69 dereference_ms=${ms(median(baseline))} validate_ms=${ms(median(validation))} from_openapi_ms=${ms(median(ours))}`,
  );
}

function graph() {
  return new StateGraph(MessagesAnnotation)
    .addNode('model', () => ({}))
    .addNode('tools', () => ({}))
    .addEdge(START, 'model')
    .addEdge('model', 'tools')
    .addEdge('tools', END)
    .compile({ checkpointer: new MemorySaver() });
}

async function portable(): Promise<void> {
  const messages = [];
  for (let turn = 0; turn < 100; turn++) {
    messages.push(new HumanMessage({ id: `h${turn}`, content: `question ${turn} `.repeat(10) }));
    messages.push(
      new AIMessage({
        id: `a${turn}`,
        content: '',
        tool_calls: [{ id: `c${turn}`, name: 'lookup', args: { turn }, type: 'tool_call' }],
      }),
    );
    messages.push(
      new ToolMessage({ id: `t${turn}`, content: `answer ${turn}`, tool_call_id: `c${turn}` }),
    );
  }
  const source = graph();
  const config = { configurable: { thread_id: 'bench' } };
  await source.updateState(config, { messages }, 'model');
  const audit = new AuditLog();
  await audit.appendMany(
    Array.from({ length: 300 }, (_, index) => ({
      threadId: 'bench',
      type: 'tool_executed' as const,
      payload: { toolCallId: `c${index}`, toolName: 'lookup' },
    })),
  );
  // Baseline: what LangGraph offers — read the state, JSON it, write it into another graph.
  let copy = 0;
  const baseline = await timeRepeated(10, async () => {
    const state = await source.getState(config);
    const text = JSON.stringify(state.values);
    await graph().updateState(
      { configurable: { thread_id: `raw-${copy++}` } },
      JSON.parse(text) as never,
      'model',
    );
  });
  const ours = await timeRepeated(10, async () => {
    const text = canonicalJson(await exportThread(source, 'bench', { audit }));
    await importThread(graph(), JSON.parse(text), { audit: new AuditLog() });
  });
  console.log(
    `portable run (300 messages, 300 audit events): getState+JSON+updateState ${ms(median(baseline))} ms, export+import ${ms(median(ours))} ms`,
  );
  console.log(
    `RESULT portable-run messages=300 events=300 raw_ms=${ms(median(baseline))} export_import_ms=${ms(median(ours))}`,
  );
}

async function otel(): Promise<void> {
  const events = (threadId: string) =>
    Array.from({ length: 3 }, (_, index) => ({
      threadId,
      type: (['tool_proposed', 'policy_decision', 'tool_executed'] as const)[index]!,
      payload: { toolCallId: `c-${threadId}`, toolName: 'lookup', verdict: 'allow' },
    }));
  const plain = new AuditLog();
  const observed = new AuditLog();
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(new InMemorySpanExporter())],
  });
  otelExporter({ tracer: provider.getTracer('bench') }).attach(observed);
  let index = 0;
  const baseline = await timeRepeated(1000, () => plain.appendMany(events(`p${index++}`)));
  const ours = await timeRepeated(1000, () => observed.appendMany(events(`o${index++}`)));
  const overhead = (median(ours) - median(baseline)) * 1000;
  console.log(
    `audit append of a tool call's 3 events: ${ms(median(baseline))} ms plain, ${ms(median(ours))} ms with spans (+${overhead.toFixed(0)} µs)`,
  );
  console.log(
    `RESULT otel events_per_call=3 plain_ms=${ms(median(baseline))} with_spans_ms=${ms(median(ours))} overhead_us=${overhead.toFixed(0)}`,
  );
}

// One MCP tool whose input schema is just under the 100 kB cap, all enum values `user <n>`
// (the needle-dense listing of the event-loop attack in test/attacks/).
function denseMcpTool(index: number) {
  const values = Array.from({ length: 8_100 }, (_, n) => `user ${n}`);
  return {
    name: `lookup_${index}`,
    description: 'Looks a record up.',
    inputSchema: { type: 'object', properties: { mode: { type: 'string', enum: values } } },
  };
}

async function mcpListing(): Promise<void> {
  const tools = Array.from({ length: 60 }, (_, index) => denseMcpTool(index));
  const server = new Server({ name: 'bench', version: '1' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }) as never);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(clientSide);
  // How late a 5 ms timer runs while the listing is imported: the longest the loop was held.
  let longest = 0;
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 5);
  const start = performance.now();
  const imported = await fromMcpClient(client, {
    safetyClassFor: 'read',
    pins: new MemoryPinStore(),
    limits: { listTimeoutMs: 120_000 },
  });
  const total = performance.now() - start;
  // The stretch since the timer last ran counts too (a loop held to the end never ran it).
  longest = Math.max(longest, performance.now() - last);
  clearInterval(ticker);
  await client.close();
  console.log(
    `MCP listing of ${imported.length} needle-dense tools (5.8 MB): ${ms(total)} ms, event loop held at most ${ms(longest)} ms`,
  );
  console.log(
    `RESULT mcp-listing tools=${imported.length} import_ms=${ms(total)} longest_block_ms=${ms(longest)}`,
  );
}

// The poisoning scan alone (`locatePoisoning`), per MB of model view: needle-dense enum values
// (`user <n>`: every one a near word of ~200 pairs) and plain prose. Best of 3.
function poisoningScan(): void {
  const texts = {
    needle_dense: modelViewText(Array.from({ length: 100_000 }, (_, n) => `user ${n}`)),
    prose: 'Returns the invoice with the given id, including its lines and totals. '.repeat(14_000),
  };
  const parts: string[] = [];
  for (const [name, text] of Object.entries(texts)) {
    const megabytes = Buffer.byteLength(text) / 1_000_000;
    let best = Number.POSITIVE_INFINITY;
    for (let round = 0; round < 3; round++) {
      const start = performance.now();
      locatePoisoning(text);
      best = Math.min(best, performance.now() - start);
    }
    console.log(
      `poisoning scan, ${name} (${megabytes.toFixed(2)} MB): ${ms(best / megabytes)} ms per MB`,
    );
    parts.push(`${name}_ms_per_mb=${ms(best / megabytes)}`);
  }
  console.log(`RESULT poisoning-scan ${parts.join(' ')}`);
}

/**
 * OpenAPI import, portable-run export/import and span export, each beside its baseline; an MCP
 * listing of needle-dense tools and the poisoning scan alone.
 */
export async function run(): Promise<void> {
  await openapi();
  await mcpListing();
  poisoningScan();
  await portable();
  await otel();
}
