// Observe a governed run two ways: as a golden trace a test can pin (recordTrace /
// toMatchTrace), and as OpenTelemetry spans following the GenAI conventions (otelExporter).
// Offline: scripted model, in-memory stores, spans printed instead of sent to a collector.
import { type AIMessage, HumanMessage } from '@langchain/core/messages';
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { AuditLog } from '@veridex/langgraph/audit';
import { governedToolNode, routeAfterTools } from '@veridex/langgraph/nodes';
import { otelExporter } from '@veridex/langgraph/otel';
import { recordTrace, renderStep, scriptedModel, toMatchTrace } from '@veridex/langgraph/testing';
import { tool } from '@veridex/langgraph/tools';
import { z } from 'zod';

const weather = tool({
  name: 'get_weather',
  description: 'Current weather for a city.',
  safetyClass: 'read',
  input: z.object({ city: z.string() }),
  output: z.object({ celsius: z.number() }),
  async execute() {
    return { celsius: 21 };
  },
});

async function run(threadId: string, audit: AuditLog) {
  const model = scriptedModel([
    { toolCalls: [{ name: 'get_weather', args: { city: 'Lisbon' } }] },
    'It is 21 °C in Lisbon.',
  ]);
  const graph = new StateGraph(MessagesAnnotation)
    .addNode('model', async (state) => ({ messages: [await model.invoke(state.messages)] }))
    .addNode('tools', governedToolNode({ tools: [weather], audit }))
    .addEdge(START, 'model')
    .addConditionalEdges('model', (s) =>
      (s.messages.at(-1) as AIMessage).tool_calls?.length ? 'tools' : END,
    )
    .addConditionalEdges('tools', routeAfterTools('model'), ['model', END])
    .compile({ checkpointer: new MemorySaver() });
  await graph.invoke(
    { messages: [new HumanMessage('Weather in Lisbon?')] },
    { configurable: { thread_id: threadId } },
  );
  return audit.events(threadId);
}

// OpenTelemetry: attach before running; each audit event becomes a span or a span event.
const spans = new InMemorySpanExporter(); // in an app: an OTLP exporter to your collector
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
const audit = new AuditLog();
const exporter = otelExporter({
  tracer: provider.getTracer('weather-agent'),
  agentName: 'weather-agent',
});
exporter.attach(audit);

// Golden trace: record one run, then check another against it (in vitest:
// `expect.extend({ toMatchTrace }); expect(events).toMatchTrace('__traces__/weather.json')`).
const golden = recordTrace(await run('first', audit));
console.log('golden trace:');
for (const step of golden.events) console.log(`  ${renderStep(step)}`);
const second = toMatchTrace.call(undefined, await run('second', audit), golden);
console.log(`second run matches the golden trace: ${second.pass}`);

// This graph has no evidence node writing run_completed, so its agent spans are still open:
// flush ends them (marked veridex.incomplete), as an application does at shutdown.
exporter.flush();
for (const span of spans.getFinishedSpans()) {
  const tool = span.attributes['gen_ai.tool.name'];
  console.log(
    `span ${span.name}${tool ? ` (${tool}, call ${span.attributes['gen_ai.tool.call.id']})` : ''}`,
  );
}
if (!second.pass || spans.getFinishedSpans().length === 0) process.exitCode = 1;
