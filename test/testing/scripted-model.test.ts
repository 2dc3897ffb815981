import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedModel } from '../../src/testing/index.js';

describe('scriptedModel', () => {
  it('plays the turn matching the number of AI messages so far, with deterministic tool call ids', async () => {
    const model = scriptedModel([{ toolCalls: [{ name: 'lookup', args: { q: 'x' } }] }, 'done']);
    const first = await model.invoke([new HumanMessage('hi')]);
    expect(first.tool_calls).toEqual([
      { id: 'call_0_0', name: 'lookup', args: { q: 'x' }, type: 'tool_call' },
    ]);
    const second = await model.invoke([
      new HumanMessage('hi'),
      first,
      new ToolMessage({ content: 'r', tool_call_id: 'call_0_0' }),
    ]);
    expect(second.content).toBe('done');
    // Stateless: asking the first question again plays the first turn again.
    expect((await model.invoke([new HumanMessage('hi')])).tool_calls?.[0]?.name).toBe('lookup');
  });

  it('reports token usage counted by a real tokenizer', async () => {
    const model = scriptedModel(['Hello there, world']);
    const message = (await model.invoke([new HumanMessage('hi')])) as AIMessage;
    expect(message.usage_metadata?.output_tokens).toBe(4);
    expect(message.usage_metadata?.input_tokens).toBe(1);
  });

  it('throws when the script runs out, unless told to repeat the last turn', async () => {
    await expect(scriptedModel([]).invoke([new HumanMessage('hi')])).rejects.toThrow(/turn 1/);
    const repeating = scriptedModel(['only'], { whenExhausted: 'repeat-last' });
    expect(
      (
        await repeating.invoke([
          new HumanMessage('a'),
          new AIMessage('only'),
          new HumanMessage('b'),
        ])
      ).content,
    ).toBe('only');
  });

  it('drives a real LangGraph tool loop with ToolNode and a checkpointer', async () => {
    const lookup = tool(async ({ q }) => `result for ${q}`, {
      name: 'lookup',
      description: 'look up',
      schema: z.object({ q: z.string() }),
    });
    const model = scriptedModel([
      { toolCalls: [{ name: 'lookup', args: { q: 'veridex' } }] },
      'The answer is in.',
    ]);
    const graph = new StateGraph(MessagesAnnotation)
      .addNode('model', async (state) => ({
        messages: [await model.bindTools([lookup]).invoke(state.messages)],
      }))
      .addNode('tools', new ToolNode([lookup]))
      .addEdge(START, 'model')
      .addConditionalEdges('model', (state) =>
        (state.messages.at(-1) as AIMessage).tool_calls?.length ? 'tools' : END,
      )
      .addEdge('tools', 'model')
      .compile({ checkpointer: new MemorySaver() });
    const result = await graph.invoke(
      { messages: [new HumanMessage('go')] },
      { configurable: { thread_id: 't' } },
    );
    expect(result.messages.map((message) => message.getType())).toEqual([
      'human',
      'ai',
      'tool',
      'ai',
    ]);
    expect(result.messages[2]?.content).toBe('result for veridex');
  });
});
