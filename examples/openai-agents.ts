// Governed tools in an OpenAI Agents SDK agent, and an SDK tool under governance.
// Offline: a scripted Model stands in for the OpenAI API (no key, tracing disabled).
import {
  Agent,
  type Model,
  type ModelResponse,
  run,
  tool as sdkTool,
  setTracingDisabled,
  Usage,
} from '@openai/agents';
import { AuditLog } from '@veridex/langgraph/audit';
import { runTool } from '@veridex/langgraph/governance';
import { fromOpenAIAgentsTool, toOpenAIAgentsTool } from '@veridex/langgraph/openai-agents';
import { tool } from '@veridex/langgraph/tools';
import { z } from 'zod';

setTracingDisabled(true);

const lookupOrder = tool({
  name: 'lookup_order',
  description: 'Looks up an order by id.',
  safetyClass: 'read',
  input: z.object({ orderId: z.string().regex(/^ord_\d+$/) }),
  output: z.object({ orderId: z.string(), status: z.string() }),
  async execute({ input }) {
    return { orderId: input.orderId, status: 'shipped' };
  },
});

/** Calls lookup_order once, then answers. */
const model: Model = {
  async getResponse(request) {
    const called =
      Array.isArray(request.input) &&
      request.input.some((item) => item.type === 'function_call_result');
    return {
      usage: new Usage(),
      output: called
        ? [
            {
              type: 'message',
              role: 'assistant',
              status: 'completed',
              content: [{ type: 'output_text', text: 'Your order has shipped.' }],
            },
          ]
        : [
            {
              type: 'function_call',
              callId: 'call_1',
              name: 'lookup_order',
              arguments: '{"orderId":"ord_42"}',
              status: 'completed',
            },
          ],
    } as ModelResponse;
  },
  // biome-ignore lint/correctness/useYield: the scripted model never streams.
  async *getStreamedResponse() {
    throw new Error('not streamed');
  },
};

const audit = new AuditLog();
const agent = new Agent<{ threadId: string }>({
  name: 'support',
  instructions: 'Answer order questions.',
  model,
  tools: [toOpenAIAgentsTool<{ threadId: string }>(lookupOrder, { audit })],
});
const result = await run(agent, 'Where is ord_42?', { context: { threadId: 'support-7' } });
console.log(`agent: ${result.finalOutput}`);
console.log(`audit: ${(await audit.events('support-7')).map((event) => event.type).join(', ')}`);

// The other way: an SDK function tool, governed (and its needsApproval still honoured).
const refund = fromOpenAIAgentsTool(
  sdkTool({
    name: 'refund',
    description: 'Refunds an order.',
    parameters: z.object({ orderId: z.string(), amount: z.number() }),
    needsApproval: async (_context, input) => input.amount > 100,
    execute: async ({ orderId, amount }) => `refunded ${amount} on ${orderId}`,
  }),
  { safetyClass: 'write' },
);
const small = await runTool(refund, { orderId: 'ord_42', amount: 20 });
const large = await runTool(refund, { orderId: 'ord_42', amount: 500 });
console.log(
  `refund 20: ${small.status}; refund 500 without approval: ${large.status === 'error' ? large.code : 'ran'}`,
);
if (small.status !== 'success' || large.status !== 'error') process.exitCode = 1;
