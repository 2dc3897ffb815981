// Keep a long-running agent inside its effective window: a ReAct agent whose pre-model hook
// compiles each model call (summary of older turns, recent turns verbatim, memories packed by
// relevance per token), while the stored history keeps every message. Offline: the model is
// scripted, summaries are extractive, and the summary cache lives in embedded PGlite.
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { MemorySaver } from '@langchain/langgraph';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { ContextCompiler, countTokens } from '@veridex/langgraph/context';
import { createDatabase, migrate } from '@veridex/langgraph/db';
import { contextNode } from '@veridex/langgraph/nodes';
import { scriptedModel } from '@veridex/langgraph/testing';
import { z } from 'zod';

const db = await createDatabase({ dataDir: 'memory://' }); // or { url: process.env.DATABASE_URL }
await migrate(db);

const lookupInvoice = tool(
  async ({ invoice }) => JSON.stringify({ invoice, amount: '1250.00', status: 'open' }),
  {
    name: 'lookup_invoice',
    description: 'Looks up an invoice by number.',
    schema: z.object({ invoice: z.string() }),
  },
);

// A model with a small window (8k tokens) so that a few hundred messages already overflow it.
const compiler = new ContextCompiler({ model: 'gpt-4', database: db });
console.log(
  `V_e = ${compiler.effectiveWindow} of ${compiler.contextLimit} tokens`,
  compiler.budgets,
);

// 150 earlier turns of the same thread.
const history: BaseMessage[] = [];
for (let turn = 0; turn < 150; turn++) {
  history.push(new HumanMessage(`Is invoice INV-${turn} paid?`));
  history.push(
    new AIMessage({
      content: '',
      tool_calls: [
        { id: `call_${turn}`, name: 'lookup_invoice', args: { invoice: `INV-${turn}` } },
      ],
    }),
  );
  history.push(
    new ToolMessage({
      content: `{"invoice":"INV-${turn}","status":"paid"}`,
      tool_call_id: `call_${turn}`,
      name: 'lookup_invoice',
    }),
  );
  history.push(new AIMessage(`Yes, INV-${turn} is paid.`));
}

let callId = 0;
const model = scriptedModel(
  [
    (messages) =>
      messages.at(-1)?.getType() === 'tool'
        ? 'INV-9001 is still open: 1,250.00 due.'
        : new AIMessage({
            content: '',
            tool_calls: [
              { id: `call_new_${++callId}`, name: 'lookup_invoice', args: { invoice: 'INV-9001' } },
            ],
          }),
  ],
  { whenExhausted: 'repeat-last' },
);

const agent = createReactAgent({
  llm: model,
  tools: [lookupInvoice],
  preModelHook: contextNode(compiler, {
    system: 'You are a careful accounts-payable assistant.',
    memories: [
      { id: 'vendor', content: 'INV-9xxx invoices come from Acme Suppliers.', score: 0.9 },
      { id: 'policy', content: 'Payments above 10,000 USD need two approvers.', score: 0.4 },
    ],
    tools: [lookupInvoice],
  }),
  checkpointer: new MemorySaver(),
});

const result = await agent.invoke(
  { messages: [...history, new HumanMessage('Is INV-9001 paid?')] },
  { configurable: { thread_id: 'ap-desk' } },
);

const seen = model.calls[0]!;
console.log(
  `stored history: ${result.messages.length} messages (${countTokens(result.messages, { model: 'gpt-4' })} tokens)`,
);
console.log(
  `the model saw:  ${seen.length} messages (${countTokens(seen, { model: 'gpt-4' })} tokens)`,
);
console.log(`${(seen[0]!.content as string).slice(0, 400)}\n…`);
console.log(`answer: ${result.messages.at(-1)!.content}`);
await db.close();
if (countTokens(seen, { model: 'gpt-4' }) > compiler.effectiveWindow) process.exit(1);
